import { Worker } from 'node:worker_threads';

/** A member the worker could not write; `code` is the system's (EEXIST, ENOTDIR, ENOSPC, …). */
export class WriteFailed extends Error {
  constructor(
    readonly member: string | null,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Op = ['dir' | 'open', string] | ['write', number, number] | ['close'] | ['link' | 'symlink', string, string];
/**
 * A batch's operations go to the worker as one flat list (name, then its arguments: `dir a open
 * a/b write 0 512 close`) rather than a list of lists: a batch holds hundreds, and copying one
 * array of strings and numbers between threads costs less than copying hundreds of arrays.
 */
type FlatOps = (string | number)[];

interface Reply {
  id: number;
  failure?: { member: string | null; code: string; message: string };
}

export interface FileWriterOptions {
  /** A batch is sent to the worker once it holds this many bytes. */
  batchBytes?: number;
  /** Past this many bytes sent and not yet written, `busy` is true: the producer should pause. */
  maxPendingBytes?: number;
  /** Called once, with the first failure (a producer that is not waiting learns of it here). */
  onError?: (err: WriteFailed) => void;
}

/**
 * Writes the members of an archive under `root` (paths relative to it, already checked) through
 * a worker thread that makes synchronous file calls. Through the libuv pool every small file
 * costs three round trips between threads (open, write, close); the worker writes batches of
 * about a megabyte back to back, as tar(1) does, and leaves the event loop free. Memory is
 * bounded by the batch and the pending limit, whatever the file sizes.
 */
export function fileWriter(root: string, options: FileWriterOptions = {}) {
  const { batchBytes = 1 << 20, maxPendingBytes = 8 << 20, onError } = options;
  const worker = new Worker(new URL('./file-writer-worker.mjs', import.meta.url), { workerData: { root }, execArgv: [] });
  let ops: FlatOps = [];
  let chunks: Buffer[] = [];
  let size = 0;
  let nextId = 0;
  let pendingBytes = 0;
  const inFlight = new Map<number, number>();
  let failure: WriteFailed | null = null;
  // Waiters for `drained` (pending bytes back under the limit) and `finish` (nothing pending).
  let waiters: { until: () => boolean; wake: () => void }[] = [];
  const wakeUp = () => {
    const ready = waiters.filter((w) => failure || w.until());
    waiters = waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.wake();
  };
  const wait = async (until: () => boolean) => {
    if (!failure && !until()) await new Promise<void>((wake) => waiters.push({ until, wake }));
    if (failure) throw failure;
  };

  const fail = (err: WriteFailed) => {
    if (failure) return;
    failure = err;
    onError?.(err);
    wakeUp();
  };
  worker.on('message', ({ id, failure: f }: Reply) => {
    if (f) return fail(new WriteFailed(f.member, f.code, f.message));
    pendingBytes -= inFlight.get(id) ?? 0;
    inFlight.delete(id);
    wakeUp();
  });
  worker.on('error', (err) => fail(new WriteFailed(null, 'EIO', err.message)));
  // A worker that ends with writes outstanding (killed, out of memory) must not leave a waiter hanging.
  let exited = false;
  const stopped = () => new WriteFailed(null, 'EIO', 'the file writer has stopped');
  worker.on('exit', () => {
    exited = true;
    if (inFlight.size > 0) fail(stopped());
  });

  /** Copies the batch's bytes into one buffer of its own, which moves to the worker without a copy. */
  const send = () => {
    if (ops.length === 0 || failure) return;
    if (exited) return fail(stopped());
    const bytes = Buffer.allocUnsafeSlow(size);
    let at = 0;
    for (const c of chunks) at += c.copy(bytes, at);
    const id = ++nextId;
    inFlight.set(id, size);
    pendingBytes += size;
    worker.postMessage({ id, ops, bytes: bytes.buffer }, [bytes.buffer]);
    ops = [];
    chunks = [];
    size = 0;
  };
  const push = (op: Op) => {
    for (const part of op) ops.push(part);
    if (size >= batchBytes) send();
  };

  return {
    dir: (member: string) => push(['dir', member]),
    open: (member: string) => push(['open', member]),
    write(chunk: Buffer) {
      chunks.push(chunk);
      size += chunk.length;
      push(['write', size - chunk.length, size]);
    },
    close: () => push(['close']),
    link: (member: string, target: string) => push(['link', member, target]),
    symlink: (member: string, target: string) => push(['symlink', member, target]),
    get busy() {
      return pendingBytes > maxPendingBytes;
    },
    /** Resolves once the writer is not busy; throws the first failure. */
    drained: () => wait(() => pendingBytes <= maxPendingBytes),
    /** Sends what is left and waits until all of it is written; throws the first failure. */
    finish() {
      send();
      return wait(() => inFlight.size === 0);
    },
    /** Stops the worker; writes it had not made yet are dropped. */
    async destroy(): Promise<void> {
      await worker.terminate();
    },
  };
}
export type FileWriter = ReturnType<typeof fileWriter>;
