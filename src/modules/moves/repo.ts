import { reachSql, type Caller } from '../../auth/caller.js';
import type { PartServers } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { equalityFilters, pageOfIds, type PageParams } from '../../db/paging.js';
import type { Failure } from '../../http/schemas.js';
import { MOVE_STEPS, type MoveStep, type MoveStepName } from './schemas.js';

export type MoveStatus =
  'queued' | 'copying' | 'ready' | 'freezing' | 'cutting_over' | 'forwarding' | 'completed' | 'failed' | 'canceled';
export const ENDED: MoveStatus[] = ['completed', 'failed', 'canceled'];

export interface MoveRow {
  id: string;
  account_id: string;
  reseller_id: string | null;
  operation_id: string;
  from_servers: PartServers;
  to_servers: PartServers;
  cutover: 'auto' | 'manual';
  from_backup: string | null;
  status: MoveStatus;
  steps: MoveStep[];
  lowered_ttls: Record<string, number>;
  cancel_requested: boolean;
  cutover_requested: boolean;
  bytes_total: number;
  bytes_copied: number;
  error: Failure | null;
  frozen_at: string | null;
  cut_over_at: string | null;
  forward_until: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

const COLUMNS = `m.id, m.account_id, m.reseller_id, m.operation_id, m.from_servers, m.to_servers, m.cutover, m.from_backup, m.status, m.steps,
  m.lowered_ttls, m.cancel_requested, m.cutover_requested, m.bytes_total::float8 AS bytes_total,
  m.bytes_copied::float8 AS bytes_copied, m.error, m.frozen_at, m.cut_over_at, m.forward_until, m.completed_at, m.created_at, m.updated_at, m.version`;
// Moves name servers, which are the provider's: only operators see them.
const reach = (caller: Caller, params: unknown[]) =>
  caller.principal.kind === 'operator'
    ? reachSql(caller, { account: 'm.account_id', reseller: 'm.reseller_id' }, params)
    : 'FALSE';

const newSteps = (): MoveStep[] => MOVE_STEPS.map((name) => ({ name, state: 'pending', started_at: null, ended_at: null }));

export async function insertMove(
  tx: Queryable,
  m: Pick<
    MoveRow,
    'id' | 'account_id' | 'reseller_id' | 'operation_id' | 'from_servers' | 'to_servers' | 'cutover' | 'from_backup'
  > & {
    drain_of: string | null;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO moves (id, account_id, reseller_id, operation_id, from_servers, to_servers, cutover, steps, drain_of, from_backup)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      m.id,
      m.account_id,
      m.reseller_id,
      m.operation_id,
      JSON.stringify(m.from_servers),
      JSON.stringify(m.to_servers),
      m.cutover,
      JSON.stringify(newSteps()),
      m.drain_of,
      m.from_backup,
    ],
  );
}

const FROM_SERVER = `(m.from_servers->>'web' = $1 OR m.from_servers->>'mail' = $1 OR m.from_servers->>'database' = $1)`;

/** Moves under way that leave the server (a drain's bound). */
export async function activeMovesFrom(db: Queryable, serverId: string): Promise<{ copying: number; forwarding: number }> {
  const r = await db.query<{ copying: number; forwarding: number }>(
    `SELECT count(*) FILTER (WHERE m.status <> 'forwarding')::int AS copying, count(*) FILTER (WHERE m.status = 'forwarding')::int AS forwarding
     FROM moves m WHERE ${FROM_SERVER} AND m.status NOT IN ('completed', 'failed', 'canceled')`,
    [serverId],
  );
  return r.rows[0] ?? { copying: 0, forwarding: 0 };
}

/** The moves whose sources forward to the server (their `forward` step running: its time not over). */
export async function forwardingTo(db: Queryable, serverId: string): Promise<{ operation_id: string }[]> {
  const r = await db.query<{ operation_id: string }>(
    `SELECT m.operation_id FROM moves m
     WHERE (m.to_servers->>'web' = $1 OR m.to_servers->>'mail' = $1) AND m.status = 'forwarding'
       AND m.steps -> $2::int ->> 'state' = 'running'`,
    [serverId, MOVE_STEPS.indexOf('forward')],
  );
  return r.rows;
}

/**
 * Ends the `forward` step of the moves whose forwarding time is over (`now` on), each once, in
 * the caller's transaction, which sends their jobs on: a move waits for this without a worker.
 */
export async function endForwarding(tx: Queryable, now: Date): Promise<{ id: string; operation_id: string }[]> {
  const index = MOVE_STEPS.indexOf('forward');
  return (
    await tx.query<{ id: string; operation_id: string }>(
      // The time twice, as text for the step and as a time to compare: a parameter has one type,
      // and a timestamptz written as text is PostgreSQL's format, not the API's RFC 3339.
      `UPDATE moves SET steps = jsonb_set(jsonb_set(steps, ARRAY[$2::text, 'state'], '"done"'), ARRAY[$2::text, 'ended_at'],
           to_jsonb($3::text)), updated_at = now()
       WHERE status = 'forwarding' AND forward_until <= $1::timestamptz AND steps -> $2::int ->> 'state' = 'running'
       RETURNING id, operation_id`,
      [now, index, now.toISOString()],
    )
  ).rows;
}

/** The accounts among `accountIds` whose moves by the server's drain failed `attempts` times already. */
export async function exhaustedByDrain(
  db: Queryable,
  serverId: string,
  accountIds: string[],
  attempts: number,
): Promise<Set<string>> {
  const r = await db.query<{ account_id: string }>(
    `SELECT account_id FROM moves WHERE drain_of = $1 AND account_id = ANY($2) AND status = 'failed'
     GROUP BY account_id HAVING count(*) >= $3`,
    [serverId, accountIds, attempts],
  );
  return new Set(r.rows.map((row) => row.account_id));
}

export async function findMove(db: Queryable, caller: Caller, id: string): Promise<MoveRow | undefined> {
  const params: unknown[] = [id];
  return (await db.query<MoveRow>(`SELECT ${COLUMNS} FROM moves m WHERE m.id = $1 AND ${reach(caller, params)}`, params)).rows[0];
}

export async function findMoveById(db: Queryable, id: string, forUpdate = false): Promise<MoveRow | undefined> {
  return (await db.query<MoveRow>(`SELECT ${COLUMNS} FROM moves m WHERE m.id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [id]))
    .rows[0];
}

export async function listMoves(
  db: Queryable,
  caller: Caller,
  f: { account_id?: string; status?: string },
  page: PageParams,
): Promise<MoveRow[]> {
  const params: unknown[] = [];
  const where = [reach(caller, params), ...equalityFilters(f, ['account_id', 'status'], 'm.', params)];
  const p = pageOfIds('moves', 'm', where, page, params);
  return (await db.query<MoveRow>(`SELECT ${COLUMNS} FROM moves m WHERE ${p.where} ${p.tail}`, params)).rows;
}

/** The fields a step or a request changes; `version` moves with every change (the move's events carry it). */
export async function updateMove(
  tx: Queryable,
  id: string,
  fields: Partial<
    Pick<
      MoveRow,
      | 'status'
      | 'cancel_requested'
      | 'cutover_requested'
      | 'bytes_total'
      | 'bytes_copied'
      | 'error'
      | 'frozen_at'
      | 'cut_over_at'
      | 'forward_until'
      | 'completed_at'
    >
  >,
): Promise<void> {
  const names = Object.keys(fields) as (keyof typeof fields)[];
  const values = names.map((n) => {
    const v = fields[n];
    return v !== null && typeof v === 'object' ? JSON.stringify(v) : v;
  });
  await tx.query(
    `UPDATE moves SET ${names.map((n, i) => `${n} = $${i + 2}`).join(', ')}, updated_at = now(), version = version + 1 WHERE id = $1`,
    [id, ...values],
  );
}

/** TTLs a zone had before the move lowered them, added to those of the zones before it. */
export async function recordLoweredTtls(tx: Queryable, id: string, had: Record<string, number>): Promise<void> {
  await tx.query('UPDATE moves SET lowered_ttls = lowered_ttls || $2::jsonb WHERE id = $1', [id, JSON.stringify(had)]);
}

/**
 * A step's state, with the time it started (the first time: a step run again after a crash, a
 * retry past the cutover or a renumbered target keeps it) or ended.
 */
export async function markStep(tx: Queryable, id: string, name: MoveStepName, state: MoveStep['state'], at: Date): Promise<void> {
  const index = MOVE_STEPS.indexOf(name);
  const field = state === 'running' ? 'started_at' : 'ended_at';
  await tx.query(
    `UPDATE moves SET steps = jsonb_set(jsonb_set(steps, ARRAY[$2::text, 'state'], to_jsonb($3::text)), ARRAY[$2::text, $4::text],
       CASE WHEN $4 = 'started_at' AND jsonb_typeof(steps #> ARRAY[$2::text, 'started_at']) = 'string'
         THEN steps #> ARRAY[$2::text, 'started_at'] ELSE to_jsonb($5::text) END), updated_at = now() WHERE id = $1`,
    [id, String(index), state, field, at.toISOString()],
  );
}
