import { cp, mkdir, readdir } from 'node:fs/promises';
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
 * (the files of a role on this machine) is copied in the same way, beside the rest. The parts
 * copy one after another (a source's agent takes their tasks in turn), and each sends its copy
 * on to the servers the account moves to, if it does, while the next copies: the frozen account
 * does not wait for the sites' files to reach the target and then for the database's dump.
 */
export async function stageCopy(
  parts: readonly BackupPart[],
  o: { accountId: string; from: PartServers; to: PartServers; staging: string; listings: string; final: boolean },
): Promise<number> {
  await mkdir(o.staging, { recursive: true });
  await mkdir(o.listings, { recursive: true, mode: 0o700 });
  const copy = { listings: o.listings, final: o.final, to: o.to };
  const sending: Promise<void>[] = [];
  // The staging's bytes, counted by what each part added while the next one copies: a walk of
  // the whole staging at the end of the final copy would lengthen the freeze.
  const counted = new Set<string>();
  const counts: Promise<number>[] = [];
  const countAdded = async () => {
    const added = (await readdir(o.staging)).filter((name) => !counted.has(name));
    for (const name of added) counted.add(name);
    const count = bytesUnder(added.map((name) => path.join(o.staging, name)));
    count.catch(() => undefined); // told below
    counts.push(count);
  };
  try {
    for (const part of parts) {
      const staged = await part.stage(o.accountId, o.staging, o.from, copy);
      const copied = { ...staged.copied };
      for (const d of staged.dirs) {
        const held = await refreshCopy({
          dest: path.join(o.staging, d.as),
          listingFile: path.join(o.listings, `here-${d.as.replaceAll('/', '_')}.json`),
          now: await listTree([{ dir: d.dir, as: '' }]),
          fetch: (names, into) => copyHere(d.dir, names, into),
          hashes: (names) => hashNames([{ dir: d.dir, as: '' }], names),
          verify: o.final,
        });
        if (held) copied[d.as] = held;
      }
      const sent = part.sendAhead?.(o.accountId, o.staging, copy, copied);
      sent?.catch(() => undefined); // told below, once everything has settled
      if (sent) sending.push(sent);
      await countAdded();
    }
  } finally {
    // Nothing still writes when a failure is told (the step retried, or rolled back).
    await Promise.allSettled([...sending, ...counts]);
  }
  await Promise.all(sending);
  return (await Promise.all(counts)).reduce((sum, n) => sum + n, 0);
}
