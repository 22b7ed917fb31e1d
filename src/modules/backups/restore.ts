import { cp, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Writable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { archiveStream } from '../../archives/pack.js';
import { byteProgress } from '../../lib/byte-progress.js';
import { publicMessage } from '../../lib/errors.js';
import { systemCaller } from '../../auth/caller.js';
import type { RecordsService } from '../domains/index.js';
import type { DomainsService } from '../domains/index.js';
import type { DatabaseBackups, DatabasesManifest } from '../databases/index.js';
import type { ServiceDeps } from '../deps.js';
import * as emails from '../emails/index.js';
import * as ops from '../operations/index.js';
import { unpackArchive } from '../sites/index.js';
import type { DeploymentsService } from '../sites/index.js';
import * as sites from '../sites/index.js';
import type { SitesService } from '../sites/index.js';
import type { BackupPart, BackupRow } from './repo.js';
import * as repo from './repo.js';
import { backupEvent } from './representation.js';
import { digestingStream, type BackupStorage } from './storage.js';
import { mailRoot } from '../../layout.js';

export interface RestoreServices {
  domains: DomainsService;
  dns: RecordsService;
  sites: SitesService;
  deployments: DeploymentsService;
  databases: DatabaseBackups;
}

class RestoreFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Manifest extends Partial<DatabasesManifest> {
  domains?: {
    id: string;
    name: string;
    mail_enabled: boolean;
    records: { name: string; type: string; ttl: number; content: string; managed: boolean }[];
  }[];
  emails?: {
    id: string;
    address: string;
    quota_mb: number;
    status: 'active' | 'suspended';
    forward_to: string[];
    autoresponder: emails.Autoresponder;
  }[];
  email_forwarders?: { id: string; address: string; destinations: string[] }[];
  sites?: { id: string; hostname: string; aliases: string[]; runtime: string }[];
}

const system = systemCaller('restore');
const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for background work the restore started (a site's provisioning, its deployment). */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  for (const start = Date.now(); Date.now() - start < timeoutMs; await pause(200)) {
    const v = await probe();
    if (v !== undefined) return v;
  }
  throw new RestoreFailure('restore_timeout', `${what} did not finish in time`);
}

/**
 * The `backup.restore` job: checks the archive against its SHA-256, unpacks it (with the same
 * checks as a deployment), then puts back what `include` names — zones record for record,
 * mailboxes with their messages and passwords, sites' files as a new live release — creating
 * what no longer exists. Running it again gives the same result (a retry after a crash).
 */
export function restoreJobs(deps: ServiceDeps, storage: BackupStorage, svc: RestoreServices) {
  const { db, config, jobs } = deps;

  async function verify(backup: BackupRow, counter: Transform): Promise<void> {
    const digest = digestingStream();
    await pipeline(storage.read(backup.storage_key), counter, digest.stream, new Writable({ write: (_c, _e, done) => done() }));
    if (digest.result().sha256 !== backup.sha256)
      throw new RestoreFailure(
        'checksum_mismatch',
        'The archive does not match its SHA-256: it is damaged and was not restored.',
      );
  }

  async function restoreDns(backup: BackupRow, manifest: Manifest): Promise<void> {
    for (const d of manifest.domains ?? []) {
      const existing = await svc.domains.get(system, d.id).catch(() => svc.domains.get(system, d.name).catch(() => undefined));
      if (existing && existing.account_id !== backup.account_id)
        throw new RestoreFailure('already_exists', `${d.name} belongs to another account now.`);
      const domain =
        existing ??
        (await svc.domains.create(system, {
          account_id: backup.account_id,
          name: d.name,
          mail_enabled: d.mail_enabled,
          template: 'empty',
        }));
      const records = d.records.filter((r) => !r.managed).map(({ name, type, ttl, content }) => ({ name, type, ttl, content }));
      await svc.dns.sync(system, domain.id, records, { zoneVersion: domain.version, dryRun: false });
    }
  }

  async function restoreMail(backup: BackupRow, manifest: Manifest, staging: string): Promise<void> {
    const hashes = JSON.parse(await readFile(path.join(staging, 'mail-credentials.json'), 'utf8').catch(() => '{}')) as Record<
      string,
      string
    >;
    const wanted = [
      ...(manifest.emails ?? []).map((m) => ({ ...m, kind: 'mailbox' as const, destinations: m.forward_to })),
      ...(manifest.email_forwarders ?? []).map((f) => ({ ...f, kind: 'forwarder' as const })),
    ];
    for (const m of wanted) {
      const domainName = m.address.split('@')[1] as string;
      const domain = await svc.domains.get(system, domainName).catch(() => undefined);
      if (!domain || domain.account_id !== backup.account_id)
        throw new RestoreFailure('domain_missing', `${domainName} is not a domain of the account; restore dns with it.`);
      const current = (await emails.findAddressById(db, m.id)) ?? (await emails.findAddressByName(db, m.address));
      const id = current?.id ?? m.id;
      if (m.kind === 'mailbox') {
        // The messages first, so the mail server never sees the mailbox without them.
        const from = path.join(staging, 'mail', domainName, m.id);
        const to = path.join(mailRoot(config.dataDir, backup.account_id, domainName), id);
        await rm(to, { recursive: true, force: true });
        if (await exists(from)) await copyMailbox(from, to);
      }
      const fields: emails.AddressFields =
        m.kind === 'mailbox'
          ? {
              password_hash: hashes[m.id] ?? current?.password_hash ?? null,
              quota_mb: m.quota_mb,
              status: m.status,
              forward_to: m.destinations,
              autoresponder: m.autoresponder,
            }
          : { password_hash: null, quota_mb: null, status: 'active', forward_to: m.destinations, autoresponder: null };
      await emails.putBackAddress(
        { db, jobs, dataDir: config.dataDir },
        { current, id, kind: m.kind, address: m.address, domain, fields },
      );
    }
  }

  async function restoreSites(backup: BackupRow, manifest: Manifest, staging: string): Promise<void> {
    for (const s of manifest.sites ?? []) {
      const files = path.join(staging, 'sites', s.id);
      if (!(await exists(files))) continue; // nothing was live
      let site = (await sites.findSiteById(db, s.id)) ?? (await sites.findSiteByHostname(db, s.hostname));
      if (site && site.account_id !== backup.account_id)
        throw new RestoreFailure('already_exists', `${s.hostname} serves another account's site now.`);
      const id =
        site?.id ??
        (
          await svc.sites.create(system, {
            account_id: backup.account_id,
            hostname: s.hostname,
            aliases: s.aliases,
            runtime: s.runtime,
          })
        ).id;
      site = await until(`provisioning ${s.hostname}`, async () => {
        const row = await sites.findSiteById(db, id);
        return row && row.status !== 'provisioning' ? row : undefined;
      });
      // The release goes live through a deployment: quota checks, an atomic switch, rollback kept.
      const archive = archiveStream(config.dataDir, [{ dir: files, as: '' }]);
      const deployment = await svc.deployments.deploy(system, site.id, archive, 'tar.gz', null);
      const op = await until(`deploying ${s.hostname}`, async () => {
        const row = await ops.findOperationById(db, deployment.operation.id);
        return row && ['succeeded', 'failed', 'canceled'].includes(row.status) ? row : undefined;
      });
      if (op.status !== 'succeeded') throw new RestoreFailure('deployment_failed', `${s.hostname}: the release did not go live.`);
    }
  }

  return async function restore(operationId: string, include: BackupPart[]): Promise<void> {
    const op = await ops.findOperationById(db, operationId);
    if (!op || !['queued', 'running'].includes(op.status)) return;
    const backup = await repo.findBackupById(db, op.resource_id);
    await ops.transition(db, op.id, ['queued', 'running'], { status: 'running', progress: 5 });
    const staging = path.join(config.dataDir, 'staging', `restore-${op.id}`);
    let failure: unknown = null;
    try {
      if (!backup || backup.status !== 'completed')
        throw new RestoreFailure('invalid_state', 'The backup is no longer available.');
      // Progress: the archive is read twice (checksum, then unpacking), 5-80 % by bytes read; the
      // applies that follow (zones, mail, sites, databases) take the rest in steps.
      const read = byteProgress({
        total: 2 * (backup.size_bytes ?? 0),
        from: 5,
        to: 80,
        report: (percent) =>
          void ops.transition(db, op.id, ['running'], { status: 'running', progress: percent }).catch(() => undefined),
      });
      await verify(backup, read.counter());
      await rm(staging, { recursive: true, force: true });
      // Berth's own archive, its checksum verified: no byte or ratio limit (a site may hold sparse files).
      const archive = storage.read(backup.storage_key);
      const counted = read.counter();
      archive.on('error', (err) => counted.destroy(err));
      await unpackArchive({ stream: archive.pipe(counted) }, 'tar.gz', staging, {
        bytes: Number.MAX_SAFE_INTEGER,
        ratio: Number.POSITIVE_INFINITY,
      });
      const manifest = JSON.parse(await readFile(path.join(staging, 'manifest.json'), 'utf8')) as Manifest;
      await ops.transition(db, op.id, ['running'], { status: 'running', progress: 80 });
      if (include.includes('dns')) await restoreDns(backup, manifest);
      await ops.transition(db, op.id, ['running'], { status: 'running', progress: 85 });
      if (include.includes('emails')) await restoreMail(backup, manifest, staging);
      await ops.transition(db, op.id, ['running'], { status: 'running', progress: 90 });
      if (include.includes('sites')) await restoreSites(backup, manifest, staging);
      await ops.transition(db, op.id, ['running'], { status: 'running', progress: 95 });
      if (include.includes('databases')) await svc.databases.restore(backup.account_id, manifest, staging);
    } catch (err) {
      failure = err;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    await db.transaction(async (tx) => {
      const error =
        failure === null
          ? null
          : {
              code: failure instanceof RestoreFailure ? failure.code : 'restore_failed',
              detail: failure instanceof Error ? publicMessage(failure) : 'unknown error',
            };
      if (!(await ops.transition(tx, op.id, ['running'], { status: error ? 'failed' : 'succeeded', progress: 100, error })))
        return;
      if (backup) await backupEvent(tx, error ? 'backup.restore.failed' : 'backup.restore.completed', backup);
    });
  };
}

/**
 * Copies a mailbox's files into place. A mail apply running at the same time (an earlier change
 * of the domain) may re-create the empty Maildir between the removal and the copy, which makes
 * `cp` fail with EEXIST on that directory; the copy then merges into it.
 */
async function copyMailbox(from: string, to: string): Promise<void> {
  const options = { recursive: true, verbatimSymlinks: true } as const;
  await cp(from, to, options).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
    await cp(from, to, { ...options, force: true });
  });
}
