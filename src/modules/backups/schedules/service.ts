import { requireWritable, type Caller } from '../../../auth/caller.js';
import { BACKUP_PARTS, type BackupPartName } from '../../../contribution.js';
import { invalid } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { checkVersion, staleVersion } from '../../../lib/if-match.js';
import { writableAccount } from '../../accounts/index.js';
import type { ServiceDeps } from '../../deps.js';
import { resourceReads } from '../../reads.js';
import { nextSlot, scheduleErrors } from './cron.js';
import * as repo from './repo.js';
import type { ExpireBeyondRetain } from './retention.js';
import type { CreateSchedule, Schedule, SchedulePatch } from './schemas.js';

const toSchedule = (r: repo.ScheduleRow): Schedule => ({
  id: r.id,
  account_id: r.account_id,
  cron: r.cron,
  timezone: r.timezone,
  include: r.include,
  retain: r.retain,
  enabled: r.enabled,
  next_run_at: r.enabled ? r.next_run_at : null,
  last_run_at: r.last_run_at,
  last_error: r.last_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

const ordered = (include: BackupPartName[]) => BACKUP_PARTS.filter((p) => include.includes(p));

export function schedulesService({ db, clock }: ServiceDeps, expireBeyondRetain: ExpireBeyondRetain) {
  const reads = resourceReads(db, {
    noun: 'backup schedule',
    find: repo.findSchedule,
    list: repo.listSchedules,
    show: toSchedule,
  });
  const { load } = reads;

  function check(cron: string | undefined, timezone: string | undefined): void {
    const errors = scheduleErrors(cron, timezone);
    if (errors.length) throw invalid(errors);
  }

  return {
    ...reads,

    async create(caller: Caller, input: CreateSchedule): Promise<Schedule> {
      const account = await writableAccount(db, caller, input.account_id);
      const timezone = input.timezone ?? 'UTC';
      check(input.cron, timezone);
      const id = newId('bks');
      await repo.insertSchedule(db, {
        id,
        account_id: account.id,
        cron: input.cron.trim(),
        timezone,
        include: ordered(input.include ?? [...BACKUP_PARTS]),
        retain: input.retain,
        enabled: input.enabled ?? true,
        next_run_at: nextSlot(input.cron, timezone, clock.now()),
      });
      return toSchedule((await repo.findScheduleById(db, id)) as repo.ScheduleRow);
    },

    /**
     * A new cron, time zone or re-enabling starts counting slots from now (missed ones are not
     * run); a lower `retain` expires the backups beyond it at once.
     */
    async update(caller: Caller, id: string, patch: SchedulePatch, expectedVersion?: number): Promise<Schedule> {
      const current = await load(caller, id);
      requireWritable(caller);
      checkVersion(expectedVersion, current.version);
      check(patch.cron, patch.timezone);
      const change: repo.ScheduleChange = {};
      if (patch.cron !== undefined) change.cron = patch.cron.trim();
      if (patch.timezone !== undefined) change.timezone = patch.timezone;
      if (patch.include !== undefined) change.include = ordered(patch.include);
      if (patch.retain !== undefined) change.retain = patch.retain;
      if (patch.enabled !== undefined) change.enabled = patch.enabled;
      if (change.cron || change.timezone || (change.enabled && !current.enabled))
        change.next_run_at = nextSlot(change.cron ?? current.cron, change.timezone ?? current.timezone, clock.now());
      if (!(await repo.updateSchedule(db, id, current.version, change))) throw staleVersion();
      if (change.retain !== undefined && change.retain < current.retain) await expireBeyondRetain(id);
      return toSchedule((await repo.findScheduleById(db, id)) as repo.ScheduleRow);
    },

    /** Its backups stay (they expire no more by this schedule's retention). */
    async remove(caller: Caller, id: string, expectedVersion?: number): Promise<void> {
      const current = await load(caller, id);
      requireWritable(caller);
      checkVersion(expectedVersion, current.version);
      await repo.deleteSchedule(db, id);
    },
  };
}
export type SchedulesService = ReturnType<typeof schedulesService>;
