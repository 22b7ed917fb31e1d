import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { systemCaller } from '../../auth/caller.js';
import { RestoreRefused, type BackupPart, type StagedPart } from '../../contribution.js';
import { renderZoneFile } from '../../provisioning/render/zone-file.js';
import type { ServiceDeps } from '../deps.js';
import type { DnssecService, SavedDnssec } from './dnssec/service.js';
import { listRecords } from './records/repo.js';
import type { DnsRecord } from './records/schemas.js';
import type { RecordsService } from './records/service.js';
import { listDomains } from './repo.js';
import { toDomain, toRecord } from './representation.js';
import type { Domain } from './schemas.js';
import type { DomainsService } from './service.js';

const ALL = { limit: 1_000_000, afterId: null };

/** What a backup's manifest holds of an account's zones. */
interface DnsManifest {
  domains?: (Domain & { records: DnsRecord[]; dnssec?: SavedDnssec })[];
}

/**
 * Zones in backups: each domain as the API shows it with its records, and its zone file
 * (`dns/<name>.zone`, for people). A restore re-creates a domain that is gone through domain
 * creation and puts its records back through the same sync a client uses (one serial bump);
 * managed records are the zone's own and come back with it. A signed zone's keys (sealed, as at
 * rest) come back with it, so the DS its parent publishes stays right.
 */
export function dnsBackupPart(
  deps: ServiceDeps,
  domains: DomainsService,
  records: RecordsService,
  dnssec: Pick<DnssecService, 'saved' | 'restoreSaved'>,
): BackupPart {
  const { db, config } = deps;
  const system = systemCaller('restore');

  return {
    name: 'dns',

    async stage(accountId: string, staging: string): Promise<StagedPart> {
      const rows = await listDomains(db, systemCaller('backup'), { account_id: accountId }, ALL);
      const manifest: Required<DnsManifest> = { domains: [] };
      await mkdir(path.join(staging, 'dns'), { recursive: true });
      for (const d of rows) {
        const zone = await listRecords(db, d.id, {}, ALL);
        const signed = await dnssec.saved(d.id);
        manifest.domains.push({
          ...toDomain(d, config.nameservers),
          records: zone.map((r) => toRecord(r, d.name)),
          ...(signed ? { dnssec: signed } : {}),
        });
        await writeFile(
          path.join(staging, 'dns', `${d.name}.zone`),
          renderZoneFile({ name: d.name, serial: d.serial, records: zone }),
        );
      }
      return { manifest, dirs: [], contents: { domains: rows.length } };
    },

    // Zones are served by the DNS servers, not the account's: a move changes its records (moves/), not the zones' place.
    land: async () => undefined,

    async restore(accountId: string, manifest: DnsManifest): Promise<void> {
      for (const d of manifest.domains ?? []) {
        const existing = await domains.get(system, d.id).catch(() => domains.get(system, d.name).catch(() => undefined));
        if (existing && existing.account_id !== accountId)
          throw new RestoreRefused('already_exists', `${d.name} belongs to another account now.`);
        const domain =
          existing ??
          (await domains.create(system, {
            account_id: accountId,
            name: d.name,
            mail_enabled: d.mail_enabled,
            template: 'empty',
          }));
        const wanted = d.records.filter((r) => !r.managed).map(({ name, type, ttl, content }) => ({ name, type, ttl, content }));
        await records.sync(system, domain.id, wanted, { zoneVersion: domain.version, dryRun: false });
        if (d.dnssec) await dnssec.restoreSaved(domain.id, d.dnssec);
      }
    },
  };
}
