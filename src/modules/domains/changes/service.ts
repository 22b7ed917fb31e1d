import { systemCaller, type Caller } from '../../../auth/caller.js';
import type { Queryable } from '../../../db/client.js';
import type { PageParams } from '../../../db/paging.js';
import { JOBS } from '../../../jobs/names.js';
import { AppError, conflict, notFound } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { ServiceDeps } from '../../deps.js';
import { publishEvent } from '../../publishing/index.js';
import type { RecordsService } from '../records/service.js';
import { findDomainById, type DomainRow } from '../repo.js';
import type { DomainsService } from '../service.js';
import { changeSetEdit } from './change-set.js';
import * as repo from './repo.js';
import type { ChangeRequest, DnsChange } from './schemas.js';

const toChange = (r: repo.ChangeRow): DnsChange => ({
  id: r.id,
  domain_id: r.domain_id,
  status: r.status,
  apply_at: r.apply_at,
  applied_at: r.applied_at,
  create: r.request.create ?? [],
  update: r.request.update ?? [],
  delete: r.request.delete ?? [],
  result: r.result,
  error: r.error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

/** The scheduler acts for nobody in particular: it may apply any scheduled change. */
const SCHEDULER = systemCaller('scheduler');

/** A failed validation, kept on the change set the way the API would have answered it. */
const problemOf = (err: AppError) => ({ code: err.code, detail: err.message, ...err.extra });

/** Change sets: atomic, applied now or at `apply_at` by whichever process runs the job. */
export function changesService(deps: ServiceDeps, domains: DomainsService, dns: RecordsService) {
  const { db, clock } = deps;

  const changeEvent = (tx: Queryable, type: string, domain: DomainRow, change: repo.ChangeRow) =>
    publishEvent(tx, {
      type,
      accountId: domain.account_id,
      resellerId: domain.reseller_id,
      resource: { type: 'dns_change', id: change.id, version: change.version },
      data: toChange(change),
    });

  async function load(caller: Caller, ref: string, id: string) {
    const domain = await domains.load(caller, ref);
    const change = await repo.findChange(db, domain.id, id);
    if (!change) throw notFound('change set');
    return { domain, change };
  }

  return {
    async create(caller: Caller, ref: string, request: ChangeRequest & { apply_at?: string | null }, dryRun: boolean) {
      const { apply_at: applyAt, ...body } = request;
      const edit = changeSetEdit(body);
      const scheduled = applyAt ? Date.parse(applyAt) > clock.now().getTime() : false;
      if (dryRun || scheduled) {
        // Validates against the zone as it is now; a scheduled set is validated again when it runs.
        const checked = await dns.changeZone(caller, ref, edit, { dryRun: true });
        if (dryRun) return { dry_run: true as const, result: checked.diff };
        const domain = checked.domain;
        const row = await db.transaction(async (tx) => {
          const change = await repo.insertChange(tx, {
            id: newId('chg'),
            domain_id: domain.id,
            status: 'scheduled',
            apply_at: applyAt ?? null,
            request: body,
            result: null,
          });
          await deps.jobs.send(tx, JOBS.dnsChangeApply, { change_id: change.id }, { startAfter: new Date(applyAt as string) });
          await changeEvent(tx, 'dns.change.scheduled', domain, change);
          return change;
        });
        return toChange(row);
      }
      let applied: repo.ChangeRow | undefined;
      await dns.changeZone(caller, ref, edit, {
        alongside: async (tx, domain, diff) => {
          applied = await repo.insertChange(tx, {
            id: newId('chg'),
            domain_id: domain.id,
            status: 'applied',
            apply_at: applyAt ?? null,
            request: body,
            result: { ...diff, serial: domain.serial },
          });
          await changeEvent(tx, 'dns.change.applied', domain, applied);
        },
      });
      return toChange(applied as repo.ChangeRow);
    },

    async get(caller: Caller, ref: string, id: string): Promise<DnsChange> {
      return toChange((await load(caller, ref, id)).change);
    },

    async list(caller: Caller, ref: string, status: string | undefined, page: PageParams): Promise<DnsChange[]> {
      const domain = await domains.load(caller, ref);
      return (await repo.listChanges(db, domain.id, status, page)).map(toChange);
    },

    /** DELETE cancels a scheduled change; one that has run (or failed) stays as it is. */
    async cancel(caller: Caller, ref: string, id: string): Promise<DnsChange> {
      const { domain, change } = await load(caller, ref, id);
      const row = await db.transaction(async (tx) => {
        const canceled = await repo.finishScheduled(tx, change.id, { status: 'canceled' });
        if (!canceled)
          throw conflict('invalid_state', `The change set is ${change.status}; only scheduled ones can be canceled.`);
        await publishEvent(tx, {
          type: 'dns.change.canceled',
          accountId: domain.account_id,
          resellerId: domain.reseller_id,
          resource: { type: 'dns_change', id: canceled.id, version: canceled.version },
          data: toChange(canceled),
        });
        return canceled;
      });
      return toChange(row);
    },

    /**
     * The scheduled run: re-validates against the zone as it is then and applies, or records
     * `failed` with the problem. The status guard makes a second delivery of the job a no-op.
     */
    async runScheduled(changeId: string): Promise<void> {
      const change = await repo.findChangeById(db, changeId);
      if (!change || change.status !== 'scheduled') return;
      try {
        await dns.changeZone(SCHEDULER, change.domain_id, changeSetEdit(change.request), {
          alongside: async (tx, domain, diff) => {
            const done = await repo.finishScheduled(tx, change.id, {
              status: 'applied',
              result: { ...diff, serial: domain.serial },
            });
            if (!done) throw conflict('invalid_state', 'The change set is no longer scheduled.');
            await changeEvent(tx, 'dns.change.applied', domain, done);
          },
        });
      } catch (err) {
        if (!(err instanceof AppError) || err.code === 'invalid_state') throw err;
        await db.transaction(async (tx) => {
          const failed = await repo.finishScheduled(tx, change.id, { status: 'failed', error: problemOf(err) });
          const domain = await findDomainById(tx, change.domain_id);
          if (failed && domain) await changeEvent(tx, 'dns.change.failed', domain, failed);
        });
      }
    },
  };
}
export type ChangesService = ReturnType<typeof changesService>;
