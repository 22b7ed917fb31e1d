/** The disk's state between two measurements. */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

/** Writes dirty pages out (sync(1)), so that neither side of a pair pays for the other's writeback. */
export const flush = (): boolean => spawnSync('sync').status === 0;

/** Empties the page cache (written-back pages only: `sync` first); false where the process may not (it takes root). */
export function dropPageCache(): boolean {
  flush();
  try {
    writeFileSync('/proc/sys/vm/drop_caches', '1');
    return true;
  } catch {
    return false;
  }
}
