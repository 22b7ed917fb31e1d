// The thread behind remove-tree.ts: removes one tree at a time with synchronous calls, so the
// walk neither floods libuv's thread pool nor runs on the event loop. Plain JavaScript so it
// starts without a TypeScript loader.
import { rmSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

parentPort.on('message', ({ id, target }) => {
  try {
    rmSync(target, { recursive: true, force: true });
    parentPort.postMessage({ id });
  } catch (err) {
    parentPort.postMessage({ id, failure: { code: err.code ?? 'EIO', message: err.message } });
  }
});
