import { cp, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { hashNames, listTree } from '../../archives/listing.js';
import { bytesUnder } from '../../archives/pack.js';
import { refreshCopy } from '../../archives/refresh.js';
import type { BackupPart, PartServers } from '../../contribution.js';

/** Names of `src` (every one: null) copied into `into` as they are, times kept; one gone meanwhile is left out. */
async function copyHere(src: string, names: string[] | null, into: string): Promise<void> {
  const options = { recursive: true, verbatimSymlinks: true, preserveTimestamps: true };
  if (!names) return cp(src, into, options);
  for (const name of names) {
    await mkdir(path.dirname(path.join(into, name)), { recursive: true });
    await cp(path.join(src, name), path.join(into, name), options).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}

/**
 * A move's copy of the account into `staging`, by every part, from the servers it leaves: the
 * first time whole, while the source serves; then, `final`, once it is frozen, only what changed
 * since (listings kept in `listings`), verified against the source. What a part names in place
 * (the files of a role on this machine) is copied in the same way, beside the rest. Each part
 * then sends its copy on to the servers the account moves to, if it does. The parts copy at the
 * same time, each into its own directories: the frozen account waits for the longest (a
 * database's dump), not for their sum.
 */
export async function stageCopy(
  parts: readonly BackupPart[],
  o: { accountId: string; from: PartServers; to: PartServers; staging: string; listings: string; final: boolean },
): Promise<number> {
  await mkdir(o.staging, { recursive: true });
  await mkdir(o.listings, { recursive: true, mode: 0o700 });
  const copy = { listings: o.listings, final: o.final, to: o.to };
  const copyPart = async (part: BackupPart) => {
    const staged = await part.stage(o.accountId, o.staging, o.from, copy);
    for (const d of staged.dirs)
      await refreshCopy({
        dest: path.join(o.staging, d.as),
        listingFile: path.join(o.listings, `here-${d.as.replaceAll('/', '_')}.json`),
        now: await listTree([{ dir: d.dir, as: '' }]),
        fetch: (names, into) => copyHere(d.dir, names, into),
        hashes: (names) => hashNames([{ dir: d.dir, as: '' }], names),
        verify: o.final,
      });
    await part.sendAhead?.(o.accountId, o.staging, copy);
  };
  // Every part settled before a failure is told: none still writes when the step is retried or rolled back.
  const failed = (await Promise.allSettled(parts.map(copyPart))).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return bytesUnder([o.staging]);
}
