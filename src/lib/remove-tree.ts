import type { Dirent } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';

const WORKER = new URL('./remove-tree-worker.mjs', import.meta.url);

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

interface RemovalThread {
  worker: Worker;
  waiting: Map<number, Waiter>;
  idle?: NodeJS.Timeout;
}
/**
 * One thread for the whole process, started for a tree and ended after a minute with none (about
 * 8 MB while it lives); it does not hold the process open while idle.
 */
let thread: RemovalThread | null = null;
let nextId = 0;
const KEPT_FOR_MS = 60_000;

function removalThread(): RemovalThread {
  if (thread) return thread;
  const worker = new Worker(WORKER, { execArgv: [] });
  const waiting = new Map<number, Waiter>();
  const settleAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  const entry: RemovalThread = { worker, waiting };
  worker.on('message', ({ id, failure }: { id: number; failure?: { code: string; message: string } }) => {
    const waiter = waiting.get(id);
    waiting.delete(id);
    if (waiting.size === 0) {
      worker.unref();
      entry.idle = setTimeout(() => {
        // Out of reach first: a tree asked for from now on starts a new thread.
        if (thread === entry) thread = null;
        void worker.terminate();
      }, KEPT_FOR_MS).unref();
    }
    if (failure) waiter?.reject(Object.assign(new Error(failure.message), { code: failure.code }));
    else waiter?.resolve();
  });
  worker.on('error', settleAll);
  worker.on('exit', () => {
    if (thread === entry) thread = null;
    settleAll(new Error('the removal thread has stopped'));
  });
  thread = entry;
  return thread;
}

/**
 * Whether a directory holding `entries` goes on the thread: one with a directory in it, or more
 * than a few names. Node's `rm` of a few files makes a few calls at once, and starting the
 * thread (cold after a minute unused) took 60 ms, on paths such as a zone's signing and a move's
 * final copy.
 */
export const onThread = (entries: Dirent[]): boolean => entries.length > 64 || entries.some((e) => e.isDirectory());

/**
 * Removes a file or a directory tree, as `rm -rf` does (nothing there is not an error); a tree
 * on a thread of its own, one call after another. Node's recursive `rm` starts every entry's
 * calls at once: for a release of 5,120 files it queued thousands on libuv's four threads, so
 * the process's other file calls, gzip and DNS lookups waited up to 90 ms behind them, and the
 * walk held the event loop up to 60 ms (bench/HISTORY.md, "2026-12-05"). Not rm(1): starting a
 * process from a server of 450 MB held its event loop 20–30 ms.
 */
export async function removeTree(target: string): Promise<void> {
  // Not a directory (a file, a link, nothing): ENOTDIR or ENOENT, and Node's rm does the rest.
  const entries = await readdir(target, { withFileTypes: true }).catch(() => null);
  if (!entries || !onThread(entries)) return rm(target, { recursive: true, force: true });
  const { worker, waiting, idle } = removalThread();
  clearTimeout(idle);
  const id = ++nextId;
  worker.ref();
  return new Promise<void>((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    worker.postMessage({ id, target });
  });
}
