import { mkdir, rename } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { ArchivedDir } from '../archives/pack.js';
import { unpackArchive } from '../archives/unpack.js';
import { accountHome, mailRoot } from '../layout.js';
import { exists } from '../lib/disk.js';
import { removeTree } from '../lib/remove-tree.js';
import type { AgentMailSpec, AgentUnit } from '../provisioning/agent-units.js';
import type { MailDriver } from '../provisioning/driver.js';
import { stagedMail } from './staged.js';

/**
 * Whether another domain of this name lives on this server (the units the agent keeps): a
 * domain deleted and created again keeps its maps, and only the old one's maildirs go.
 */
const nameServedByAnother = (units: AgentUnit[], key: string, name: string) =>
  units.some((u) => u.kind === 'mail' && u.key !== key && !u.spec.removed && u.spec.enabled && u.spec.domain.name === name);

/**
 * A mail domain on this mail server, applied as the control plane's mail reconciler applies one
 * of its own: its mailboxes under the agent's data directory, its maps, its signing key; a
 * domain without mail there, or gone, is withdrawn.
 */
export async function applyMailUnit(
  o: { dataDir: string; mail: MailDriver },
  key: string,
  spec: AgentMailSpec,
  kept: AgentUnit[],
): Promise<void> {
  const root = mailRoot(o.dataDir, spec.account_id, spec.domain.name);
  if (spec.enabled && !spec.removed) return o.mail.applyDomain({ ...spec.domain, root });
  await o.mail.removeDomain(spec.domain.name, root, { keepMaps: nameServedByAnother(kept, key, spec.domain.name) });
}

/** A withdrawn account's mail domains on this server (the ones this agent was handed). */
export async function withdrawMail(
  o: { dataDir: string; mail: MailDriver },
  accountId: string,
  kept: AgentUnit[],
): Promise<void> {
  const others = kept.filter((u) => !(u.kind === 'mail' && u.spec.account_id === accountId));
  for (const unit of kept)
    if (unit.kind === 'mail' && unit.spec.account_id === accountId)
      await applyMailUnit(o, unit.key, { ...unit.spec, removed: true }, others);
}

/** The account's maildirs of these domains, packed as `<domain>/<mailbox id>/...` (what a backup stages under `mail/`). */
export async function mailDirs(dataDir: string, accountId: string, domains: string[]): Promise<ArchivedDir[]> {
  const dirs = [];
  for (const name of domains) {
    const dir = mailRoot(dataDir, path.basename(accountId), name);
    if (await exists(dir)) dirs.push({ dir, as: path.basename(name) });
  }
  return dirs;
}

/**
 * Puts mailboxes' messages back from a backup (`<domain>/<mailbox id>/...`): unpacked beside the
 * account's mail first, then each mailbox listed replaces its directory by a rename; the mail
 * apply that follows gives them to the mail server's user. `staged`: a move's copy sent ahead
 * (`mail.receive`) is put in place the same way, no input read; run again (the process killed
 * meanwhile), a mailbox already moved is no longer staged and keeps what it has, and a copy no
 * longer here (all of it moved) fails the task: the control plane then sends its copy.
 */
export async function unpackMail(
  dataDir: string,
  task: { account_id: string; mailboxes: { domain: string; id: string }[]; staged?: boolean },
  input: () => Promise<Readable>,
  taskId: string,
): Promise<void> {
  const account = path.basename(task.account_id);
  if (task.staged) {
    const staged = stagedMail(dataDir, account);
    if (!(await exists(staged))) throw new Error('no copy of the maildirs is staged on this server');
    await placeMailboxes(dataDir, account, staged, task.mailboxes, { emptyMissing: false });
    await removeTree(staged);
    return;
  }
  const partial = path.join(accountHome(dataDir, account), `.mail-restore-${path.basename(taskId)}`);
  await removeTree(partial);
  try {
    // The control plane's own backup: no ratio; its size was bounded when it was made.
    await unpackArchive({ stream: await input() }, 'tar.gz', partial, {
      bytes: Number.MAX_SAFE_INTEGER,
      ratio: Number.POSITIVE_INFINITY,
    });
    await placeMailboxes(dataDir, account, partial, task.mailboxes, { emptyMissing: true });
  } finally {
    await removeTree(partial);
  }
}

/** Each mailbox's directory replaced by its copy under `from`; one without a copy there emptied, or kept. */
async function placeMailboxes(
  dataDir: string,
  account: string,
  from: string,
  mailboxes: { domain: string; id: string }[],
  o: { emptyMissing: boolean },
): Promise<void> {
  for (const m of mailboxes) {
    const copy = path.join(from, path.basename(m.domain), path.basename(m.id));
    const to = path.join(mailRoot(dataDir, account, m.domain), path.basename(m.id));
    const held = await exists(copy);
    if (!held && !o.emptyMissing) continue;
    await removeTree(to);
    if (!held) continue;
    await mkdir(path.dirname(to), { recursive: true });
    await rename(copy, to);
  }
}
