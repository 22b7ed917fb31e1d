// The worker thread behind file-writer.ts: runs batches of file operations with synchronous
// calls, one after another, as tar(1) does. Plain JavaScript so it starts without a TypeScript
// loader. Paths arrive validated (inside the release); nothing here follows a link, because the
// links of an archive are the last operations of its last batch. One thread serves one
// unpacking at a time, and is kept for the next: `{ root }` starts one.
import { closeSync, linkSync, mkdirSync, openSync, symlinkSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';

let root = null;
const made = new Set();
let file = null; // { fd, member }
let failed = false;

function ensureDir(dir) {
  if (made.has(dir)) return;
  mkdirSync(dir, { recursive: true });
  made.add(dir);
}

/** A later member of the same name replaces an earlier file, as with tar -x. */
function create(full) {
  try {
    return openSync(full, 'wx', 0o644);
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
    unlinkSync(full);
    return openSync(full, 'wx', 0o644);
  }
}

function run(op, bytes) {
  switch (op[0]) {
    case 'dir':
      return ensureDir(path.join(root, op[1]));
    case 'open': {
      const full = path.join(root, op[1]);
      ensureDir(path.dirname(full));
      file = { member: op[1], fd: create(full) };
      return;
    }
    case 'write':
      for (let at = op[1]; at < op[2];) at += writeSync(file.fd, bytes, at, op[2] - at);
      return;
    case 'close':
      closeSync(file.fd);
      file = null;
      return;
    case 'link':
    case 'symlink': {
      const full = path.join(root, op[1]);
      ensureDir(path.dirname(full));
      if (op[0] === 'link') linkSync(path.join(root, op[2]), full);
      else symlinkSync(op[2], full);
      return;
    }
  }
}

/** How many arguments follow each operation's name in a batch's flat list (file-writer.ts). */
const ARITY = { dir: 1, open: 1, write: 2, close: 0, link: 2, symlink: 2 };

parentPort.on('message', (message) => {
  if (message.root !== undefined) {
    // A thread with a failure or a file still open is never given another unpacking (file-writer.ts).
    root = message.root;
    made.clear();
    return;
  }
  const { id, ops, bytes } = message;
  if (failed) return;
  const data = new Uint8Array(bytes);
  let member = null;
  try {
    for (let i = 0; i < ops.length;) {
      const op = ops.slice(i, (i += 1 + ARITY[ops[i]]));
      member = op[0] === 'write' || op[0] === 'close' ? (file?.member ?? null) : op[1];
      run(op, data);
    }
    // The batch's buffer goes back, for a later batch (no fresh pages for every megabyte).
    parentPort.postMessage({ id, bytes }, [bytes]);
  } catch (err) {
    failed = true;
    if (file) closeSync(file.fd);
    parentPort.postMessage({ id, failure: { member, code: err.code ?? 'EIO', message: err.message } });
  }
});
