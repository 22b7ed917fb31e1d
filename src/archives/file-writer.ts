import { Worker } from 'node:worker_threads';
import { keep, take } from './buffer-pool.js';

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
  /** The batch's buffer, back from the worker once written. */
  bytes?: ArrayBuffer;
  failure?: { member: string | null; code: string; message: string };
}

const WORKER = new URL('./file-writer-worker.mjs', import.meta.url);

/**
 * Threads whose unpacking finished, kept for the next: starting one takes about 30 ms of CPU,
 * on the path of every deployment (its first batches wait for it). Kept threads do not hold the
 * process open, and end after a minute unused.
 */
const idle: { worker: Worker; timer: NodeJS.Timeout }[] = [];
const KEPT_THREADS = 2;
const KEPT_FOR_MS = 60_000;

function startWorker(root: string): Worker {
  // The thread kept last, whose memory is the likeliest to be warm still.
  const kept = idle.pop();
  let worker: Worker;
  if (kept) {
    clearTimeout(kept.timer);
    worker = kept.worker;
    worker.ref();
  } else {
    worker = new Worker(WORKER, { execArgv: [] });
    // A kept thread that ends (killed, out of memory) is not handed out again.
    worker.once('exit', () => {
      const at = idle.findIndex((e) => e.worker === worker);
      if (at >= 0) idle.splice(at, 1);
    });
  }
  worker.postMessage({ root });
  return worker;
}

function retire(worker: Worker): void {
  if (idle.length >= KEPT_THREADS) return void worker.terminate();
  worker.unref();
  // Taken out of `idle` as it is told to end: its exit comes later, and an unpacking given it
  // meanwhile failed ("the file writer has stopped"). An exit for any other reason takes it out
  // too (startWorker).
  const entry = {
    worker,
    timer: setTimeout(() => {
      const at = idle.indexOf(entry);
      if (at >= 0) idle.splice(at, 1);
      void worker.terminate();
    }, KEPT_FOR_MS).unref(),
  };
  idle.push(entry);
}

/** Room past `batchBytes` in a batch's buffer: the chunk that fills a batch is part of it. */
const BATCH_SLACK = 512 * 1024;

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
  const worker = startWorker(root);
  // The usual batch fits a kept buffer of this length, which the worker hands back once written.
  const capacity = batchBytes + BATCH_SLACK;
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
  const onMessage = ({ id, bytes, failure: f }: Reply) => {
    if (f) return fail(new WriteFailed(f.member, f.code, f.message));
    if (bytes?.byteLength === capacity) keep([Buffer.from(bytes)]);
    pendingBytes -= inFlight.get(id) ?? 0;
    inFlight.delete(id);
    wakeUp();
  };
  const onWorkerError = (err: Error) => fail(new WriteFailed(null, 'EIO', err.message));
  // A worker that ends with writes outstanding (killed, out of memory) must not leave a waiter
  // hanging. Also set by destroy(): the thread is no longer this writer's, kept or stopped.
  let exited = false;
  const stopped = () => new WriteFailed(null, 'EIO', 'the file writer has stopped');
  const onExit = () => {
    exited = true;
    if (inFlight.size > 0) fail(stopped());
  };
  worker.on('message', onMessage).on('error', onWorkerError).on('exit', onExit);
  /** A file opened and not yet closed: the thread is not kept with it open. */
  let fileOpen = false;

  /** Copies the batch's bytes into one buffer of its own, which moves to the worker without a copy. */
  const send = () => {
    if (ops.length === 0 || failure) return;
    if (exited) return fail(stopped());
    const bytes = take(Math.max(size, capacity));
    let at = 0;
    for (const c of chunks) at += c.copy(bytes, at);
    const id = ++nextId;
    inFlight.set(id, size);
    pendingBytes += size;
    // take() gives a buffer of its own (allocUnsafeSlow), never a slice of a shared one.
    const whole = bytes.buffer as ArrayBuffer;
    worker.postMessage({ id, ops, bytes: whole }, [whole]);
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
    open(member: string) {
      fileOpen = true;
      push(['open', member]);
    },
    write(chunk: Buffer) {
      chunks.push(chunk);
      size += chunk.length;
      push(['write', size - chunk.length, size]);
    },
    close() {
      fileOpen = false;
      push(['close']);
    },
    link: (member: string, target: string) => push(['link', member, target]),
    symlink: (member: string, target: string) => push(['symlink', member, target]),
    /** The writing thread's id: a finished unpacking's thread serves the next. */
    threadId: worker.threadId,
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
    /**
     * Done with the writer: a thread that wrote everything it was given is kept for the next
     * unpacking; any other is stopped, and writes it had not made yet are dropped.
     */
    async destroy(): Promise<void> {
      if (exited) return;
      exited = true;
      worker.off('message', onMessage).off('error', onWorkerError).off('exit', onExit);
      if (!failure && inFlight.size === 0 && ops.length === 0 && !fileOpen) retire(worker);
      else await worker.terminate();
    },
  };
}
export type FileWriter = ReturnType<typeof fileWriter>;
