import { syncErrorGauge, type Contribution } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { DnsDriver } from '../../provisioning/driver.js';
import type { ServiceDeps } from '../deps.js';
import type { ServerAddresses, ServerHooks } from '../servers/index.js';
import { dnsBackupPart } from './backup.js';
import { dnsChangeRoutes } from './changes/routes.js';
import { changeSchemas } from './changes/schemas.js';
import { changesService } from './changes/service.js';
import { dnssecRoutes } from './dnssec/routes.js';
import { dnssecSchemas } from './dnssec/schemas.js';
import { dnssecService, type ParentLook } from './dnssec/service.js';
import type { DomainHooks } from './hooks.js';
import { dnsReconciler } from './reconciler.js';
import { dnsRoutes } from './records/routes.js';
import { recordSchemas } from './records/schemas.js';
import { recordsService } from './records/service.js';
import { zoneUnits } from './repo.js';
import { domainRoutes } from './routes.js';
import { domainSchemas } from './schemas.js';
import { domainsService } from './service.js';
import { acmeChallengeRecords } from './zone/acme-challenges.js';
import { readdressFrom, serverRecords } from './zone/server-records.js';

/** Domains and their zones: records, change sets, the zone apply and scheduled changes, and zones' part of backups. */
export function domainsModule(
  svc: ServiceDeps,
  hooks: DomainHooks,
  driver: DnsDriver,
  logParentLook: (look: ParentLook) => void = () => undefined,
) {
  const domains = domainsService(svc, hooks);
  const records = recordsService(svc, domains);
  const changes = changesService(svc, domains, records);
  const dnssec = dnssecService(svc, domains);
  const addressRecords = serverRecords(svc);
  const contribution: Contribution = {
    schemas: [...domainSchemas, ...recordSchemas, ...changeSchemas, ...dnssecSchemas],
    routes: (app) => {
      domainRoutes(app, domains);
      dnsRoutes(app, domains, records);
      dnsChangeRoutes(app, domains, changes);
      dnssecRoutes(app, domains, dnssec);
    },
    workers: [
      { queue: JOBS.dnsApply, run: dnsReconciler(svc.db, driver, dnssec) },
      { queue: JOBS.dnsChangeApply, run: (data) => changes.runScheduled(String(data.change_id)) },
      { queue: JOBS.serverReaddress, run: (data) => addressRecords.readdress(String(data.server_id), readdressFrom(data.from)) },
    ],
    gauges: [syncErrorGauge('dns', () => zoneUnits.countErrors(svc.db))],
    housekeeping: [
      (now) => domains.pruneRetiredDkim(now),
      (now) => dnssec.resignDue(now),
      async () => {
        const look = await dnssec.checkWaiting();
        if (look.waiting > 0) logParentLook(look);
      },
    ],
  };
  return {
    contribution,
    backupPart: dnsBackupPart(svc, domains, records, dnssec),
    acmeChallenges: acmeChallengeRecords(svc),
    serverRecords: addressRecords,
    /** A server's addresses changed: its accounts' records follow (a job, after the change commits). */
    serverHooks: {
      addressesChanged: [
        (tx: Queryable, serverId: string, had: ServerAddresses) =>
          svc.jobs.send(tx, JOBS.serverReaddress, { server_id: serverId, from: had }),
      ],
    } satisfies Pick<ServerHooks, 'addressesChanged'>,
  };
}
