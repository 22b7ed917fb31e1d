import { chmod, link, mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { removeTree } from '../lib/remove-tree.js';
import { inSlices } from '../lib/slices.js';
import { checkLinksInside } from './unpack.js';

/**
 * A copy of the tree `src` at `dest` made of hard links (one filesystem): no byte is written
 * again and `src` stays as it was. Directories keep their modes; files and symbolic links share
 * their inodes with `src`; anything else (a socket, a device) is left out. Refused as an unpacked
 * release would be (`ArchiveRefused` link_escapes) when a symbolic link leads outside `dest`,
 * which is then removed, as it is on any failure.
 */
export async function linkedCopy(src: string, dest: string): Promise<void> {
  let links = 0;
  const walk = async (from: string, to: string): Promise<void> => {
    await mkdir(to);
    await chmod(to, (await stat(from)).mode & 0o7777);
    const entries = await readdir(from, { withFileTypes: true });
    await inSlices(entries, async (e) => {
      const [a, b] = [path.join(from, e.name), path.join(to, e.name)];
      if (e.isDirectory()) return walk(a, b);
      if (e.isSymbolicLink()) links += 1;
      // link(2) on Linux links a symbolic link itself, never what it points at.
      if (e.isFile() || e.isSymbolicLink()) await link(a, b);
    });
  };
  await removeTree(dest);
  try {
    await walk(src, dest);
    if (links > 0) await checkLinksInside(dest, dest);
  } catch (err) {
    await removeTree(dest);
    throw err;
  }
}
