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

interface Reply {
  id: number;
  failure?: { member: string | null; code: string; message: string };
}

export interface FileWriterOptions {
  /** A batch is sent to a worker once it holds this many bytes. */
  batchBytes?: number;
  /** Past this many bytes sent and not yet written, `busy` is true: the producer should pause. */
  maxPendingBytes?: number;
  /** Called once, with the first failure (a producer that is not waiting learns of it here). */
  onError?: (err: WriteFailed) => void;
  /** Worker threads writing side by side (see `laneOf`). */
  threads?: number;
}

/**
 * Writes the members of an archive under `root` (paths relative to it, already checked) through
 * worker threads that make synchronous file calls. Through the libuv pool every small file
 * costs three round trips between threads (open, write, close); a worker writes batches of
 * about a megabyte back to back, as tar(1) does, and leaves the event loop free. Two workers
 * create files side by side (creating a file is mostly the kernel's time, and tar's gzip
 * already has a core of its own): members go to a worker by their first path component, so
 * the members that can meet (a file `a` then `a/b`, a later `a` replacing an earlier one,
 * the directory `a` and what is in it) go to the same one, in the archive's order. Links wait
 * until every file is written, then go in the order given. Memory is bounded by the batches
 * and the pending limit, whatever the file sizes.
 */
export function fileWriter(root: string, options: FileWriterOptions = {}) {
  const { batchBytes = 1 << 20, maxPendingBytes = 8 << 20, onError, threads = 2 } = options;
  let pendingBytes = 0;
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
  const stopped = () => new WriteFailed(null, 'EIO', 'the file writer has stopped');

  /** One worker and the batch being gathered for it. */
  function lane() {
    const worker = new Worker(new URL('./file-writer-worker.mjs', import.meta.url), { workerData: { root }, execArgv: [] });
    let ops: Op[] = [];
    let chunks: Buffer[] = [];
    let size = 0;
    let nextId = 0;
    const inFlight = new Map<number, number>();
    worker.on('message', ({ id, failure: f }: Reply) => {
      if (f) return fail(new WriteFailed(f.member, f.code, f.message));
      pendingBytes -= inFlight.get(id) ?? 0;
      inFlight.delete(id);
      wakeUp();
    });
    worker.on('error', (err) => fail(new WriteFailed(null, 'EIO', err.message)));
    // A worker that ends with writes outstanding (killed, out of memory) must not leave a waiter hanging.
    let exited = false;
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
      ops.push(op);
      if (size >= batchBytes) send();
    };
    return {
      push,
      send,
      write(chunk: Buffer) {
        chunks.push(chunk);
        size += chunk.length;
        push(['write', size - chunk.length, size]);
      },
      idle: () => inFlight.size === 0,
      stop: () => worker.terminate(),
    };
  }

  const lanes = Array.from({ length: Math.max(1, threads) }, lane);
  const laneOf = (member: string) => {
    const slash = member.indexOf('/');
    const top = slash < 0 ? member : member.slice(0, slash);
    let hash = 0;
    for (let i = 0; i < top.length; i++) hash = (hash * 31 + top.charCodeAt(i)) | 0;
    return lanes[(hash >>> 0) % lanes.length] as ReturnType<typeof lane>;
  };
  let current = lanes[0] as ReturnType<typeof lane>;
  const links: Op[] = [];
  const allIdle = () => lanes.every((l) => l.idle());

  return {
    dir: (member: string) => laneOf(member).push(['dir', member]),
    open(member: string) {
      current = laneOf(member);
      current.push(['open', member]);
    },
    write: (chunk: Buffer) => current.write(chunk),
    close: () => current.push(['close']),
    link: (member: string, target: string) => void links.push(['link', member, target]),
    symlink: (member: string, target: string) => void links.push(['symlink', member, target]),
    get busy() {
      return pendingBytes > maxPendingBytes;
    },
    /** Resolves once the writer is not busy; throws the first failure. */
    drained: () => wait(() => pendingBytes <= maxPendingBytes),
    /** Sends what is left, then the links once every file is written, and waits for all of it; throws the first failure. */
    async finish() {
      for (const l of lanes) l.send();
      await wait(allIdle);
      if (links.length === 0) return;
      const last = lanes[0] as ReturnType<typeof lane>;
      for (const op of links.splice(0)) last.push(op);
      last.send();
      await wait(allIdle);
    },
    /** Stops the workers; writes they had not made yet are dropped. */
    async destroy(): Promise<void> {
      await Promise.all(lanes.map((l) => l.stop()));
    },
  };
}
export type FileWriter = ReturnType<typeof fileWriter>;
