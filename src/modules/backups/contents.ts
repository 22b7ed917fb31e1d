import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { systemCaller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { renderZoneFile } from '../../provisioning/render/zone-file.js';
import { findAccountById } from '../accounts/index.js';
import { toAccount } from '../accounts/index.js';
import * as domains from '../domains/index.js';
import { listRecords } from '../domains/index.js';
import { toDomain, toRecord } from '../domains/index.js';
import { listAddresses } from '../emails/index.js';
import { presentAddress } from '../emails/index.js';

import { listSites } from '../sites/index.js';
import { toSite } from '../sites/index.js';
import type { ArchivedDir } from '../../archives/pack.js';
import type { BackupRow } from './repo.js';
import type { DatabaseBackups } from '../databases/index.js';
import { mailRoot, releaseDir, siteDir } from '../../layout.js';

const ALL = { limit: 1_000_000, afterId: null };
const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

/**
 * Writes the generated part of a backup into `staging` (manifest.json with every resource as
 * the API returns it, mailbox and database password hashes for a restore, one zone file per
 * domain, one dump per database) and
 * lists the account's directories to archive: each site's live release and each mail domain's
 * Maildirs. Returns the counts recorded as the backup's `contents`.
 */
export async function stageBackup(
  db: Queryable,
  dataDir: string,
  nameservers: readonly string[],
  backup: BackupRow,
  staging: string,
  databases: DatabaseBackups,
): Promise<{ dirs: ArchivedDir[]; contents: Record<string, number> }> {
  const caller = systemCaller('backup');
  const filter = { account_id: backup.account_id };
  const account = await findAccountById(db, backup.account_id);
  if (!account) throw new Error('the account no longer exists');
  const include = new Set(backup.include);
  const dirs: ArchivedDir[] = [];
  const contents: Record<string, number> = {};
  const manifest: Record<string, unknown> = {
    format: 'berth-backup/1',
    backup: { id: backup.id, account_id: backup.account_id, include: backup.include, created_at: backup.created_at },
    account: toAccount(account),
  };
  await mkdir(path.join(staging, 'dns'), { recursive: true });

  if (include.has('dns')) {
    const rows = await domains.listDomains(db, caller, filter, ALL);
    manifest.domains = [];
    for (const d of rows) {
      const records = await listRecords(db, d.id, {}, ALL);
      (manifest.domains as unknown[]).push({ ...toDomain(d, nameservers), records: records.map((r) => toRecord(r, d.name)) });
      await writeFile(path.join(staging, 'dns', `${d.name}.zone`), renderZoneFile({ name: d.name, serial: d.serial, records }));
    }
    contents.domains = rows.length;
  }

  if (include.has('emails')) {
    const mailboxes = await listAddresses(db, caller, 'mailbox', filter, ALL);
    const forwarders = await listAddresses(db, caller, 'forwarder', filter, ALL);
    manifest.emails = await Promise.all(mailboxes.map((r) => presentAddress(dataDir, r)));
    manifest.email_forwarders = await Promise.all(forwarders.map((r) => presentAddress(dataDir, r)));
    // Hashes, never passwords: what a restore needs to bring the logins back.
    await writeFile(
      path.join(staging, 'mail-credentials.json'),
      JSON.stringify(Object.fromEntries(mailboxes.map((r) => [r.id, r.password_hash]))),
      { mode: 0o600 },
    );
    for (const name of new Set(mailboxes.map((r) => r.domain_name))) {
      const dir = mailRoot(dataDir, backup.account_id, name);
      if (await exists(dir)) dirs.push({ dir, as: `mail/${name}` });
    }
    contents.emails = mailboxes.length;
    contents.email_forwarders = forwarders.length;
  }

  if (include.has('sites')) {
    const rows = await listSites(db, caller, filter, ALL);
    manifest.sites = rows.map(toSite);
    for (const s of rows) {
      if (!s.current_deployment_id) continue;
      const dir = releaseDir(siteDir(dataDir, s.account_id, s.id), s.current_deployment_id);
      if (await exists(dir)) dirs.push({ dir, as: `sites/${s.id}` });
    }
    contents.sites = rows.length;
  }

  if (include.has('databases')) {
    const staged = await databases.stage(backup.account_id, staging);
    Object.assign(manifest, staged.manifest);
    Object.assign(contents, staged.contents);
  }

  await writeFile(path.join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return { dirs, contents };
}
