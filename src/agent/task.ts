import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { hashNames, listTree } from '../archives/listing.js';
import { type ArchivedDir, archiveStream, TRANSFER_LEVEL } from '../archives/pack.js';
import { acmeChallengeDir, releaseDir, siteDir } from '../layout.js';
import type { AgentTask } from '../provisioning/agent-units.js';
import type { CronDriver, DatabaseDriver } from '../provisioning/driver.js';
import { liveRelease } from '../provisioning/releases.js';
import { httpProofs } from '../tls/http-proofs.js';
import { mailDirs, unpackMail } from './mail.js';
import { discardStaged, receiveStaged } from './staged.js';

export interface TaskDeps {
  dataDir: string;
  database: DatabaseDriver;
  cron: CronDriver;
  /** The task's input, as the control plane sends it. */
  input: () => Promise<Readable>;
  /** Sends the task's output to the control plane. */
  output: (body: Readable) => Promise<void>;
}

/** Proofs as the web server's challenge directory takes them (the identifier plays no part there). */
const proofs = (tokens: { token: string; key_authorization?: string }[]) =>
  tokens.map((p) => ({ type: 'http-01' as const, identifier: '', token: p.token, keyAuthorization: p.key_authorization ?? '' }));

/**
 * One task. A database's dump is streamed to the control plane as the local driver makes it (its
 * tables' checksums sent as JSON); a dump fetched from it is kept under the agent's own directory (0600: it holds the account's
 * data) only while it is loaded. A site's live release is packed as it is
 * now, with what the site wrote into it since; an account's maildirs are packed, or put back; a
 * move's copy of a site or of the maildirs is received ahead of its cutover, or discarded.
 * ACME proofs go where this server's web server serves `/.well-known/acme-challenge/`. A cron
 * job's run is started, and reported by the runner as every run is.
 */
export async function runTask(o: TaskDeps, id: string, task: AgentTask): Promise<void> {
  if (task.action === 'acme.present') return httpProofs(acmeChallengeDir(o.dataDir)).present(proofs(task.proofs));
  if (task.action === 'acme.clean_up')
    return httpProofs(acmeChallengeDir(o.dataDir)).cleanUp(proofs(task.tokens.map((token) => ({ token }))));
  if (task.action === 'site.pack') {
    const site = siteDir(o.dataDir, path.basename(task.account_id), path.basename(task.site_id));
    const release = releaseDir(site, path.basename(task.release));
    if ((await liveRelease(site)) !== task.release) throw new Error(`release ${task.release} is not live on this server yet`);
    return o.output(await packed(o.dataDir, [{ dir: release, as: '' }], task));
  }
  if (task.action === 'mail.pack')
    return o.output(await packed(o.dataDir, await mailDirs(o.dataDir, task.account_id, task.domains), task));
  if (task.action === 'mail.unpack') return unpackMail(o.dataDir, task, o.input, id);
  if (task.action === 'site.receive' || task.action === 'mail.receive') return receiveStaged(o.dataDir, task, o.input);
  if (task.action === 'site.discard' || task.action === 'mail.discard') return discardStaged(o.dataDir, task);
  // Started (or, where jobs never run, recorded skipped): the runner's record reports the rest.
  if (task.action === 'cron.run') return void (await o.cron.runNow(task.job_id, task.run_id));
  if (task.action === 'database.dump') {
    // Sent as it is made; cut off if it fails, and the control plane keeps nothing of it then.
    const dump = new PassThrough();
    await Promise.all([o.database.dump(task.database, dump, task.except), o.output(dump)]);
    return;
  }
  if (task.action === 'database.discard') return o.database.removeAccount(`${task.username}_`);
  if (task.action === 'database.checksum')
    return o.output(Readable.from([JSON.stringify(await o.database.checksums(task.database))]));
  // Loaded as it arrives: a move's land waits for the transfer and the load at once, not in turn.
  await o.database.load(task.database, await o.input(), task.partial);
}

/** What a pack task sends: the archive of `dirs`, of only some of their files, their listing or some files' hashes. */
async function packed(
  dataDir: string,
  dirs: ArchivedDir[],
  task: { list?: boolean; hash?: string[]; only?: string[] },
): Promise<Readable> {
  if (task.list) return Readable.from([JSON.stringify(await listTree(dirs))]);
  if (task.hash) return Readable.from([JSON.stringify(await hashNames(dirs, task.hash))]);
  return archiveStream(dataDir, dirs, { only: task.only && new Set(task.only), level: TRANSFER_LEVEL });
}
