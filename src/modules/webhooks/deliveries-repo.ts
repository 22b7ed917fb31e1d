import type { Queryable } from '../../db/client.js';
import { equalityFilters, type PageParams, pageSql } from '../../db/paging.js';
import type { WebhookRow } from './repo.js';

type DeliveryStatus = 'pending' | 'sending' | 'succeeded' | 'failed';

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  status: DeliveryStatus;
  automatic: boolean;
  attempt_count: number;
  next_attempt_at: string | null;
  claim: number;
  lease_until: string | null;
  last_status_code: number | null;
  last_error: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface AttemptRow {
  delivery_id: string;
  number: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  next_attempt_at: string | null;
}

export interface NewDelivery {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  payload: string;
}

/** Notified when deliveries are written: the commit wakes the relay of every process. */
export const RELAY_CHANNEL = 'berth_webhook_deliveries';

/** The outbox: pending deliveries, due at once (next_attempt_at null). One per event and endpoint. */
export async function insertDeliveries(tx: Queryable, rows: NewDelivery[]): Promise<void> {
  if (!rows.length) return;
  await tx.query(
    `WITH inserted AS (
       INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, payload)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
       ON CONFLICT (webhook_id, event_id) DO NOTHING
       RETURNING 1)
     SELECT pg_notify($6, '') WHERE EXISTS (SELECT 1 FROM inserted)`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.webhook_id),
      rows.map((r) => r.event_id),
      rows.map((r) => r.event_type),
      rows.map((r) => r.payload),
      RELAY_CHANNEL,
    ],
  );
}

export async function findDelivery(db: Queryable, webhookId: string, id: string): Promise<DeliveryRow | undefined> {
  return (await db.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1 AND webhook_id = $2', [id, webhookId]))
    .rows[0];
}

export async function listDeliveries(
  db: Queryable,
  webhookId: string,
  f: { status?: string; event_type?: string },
  page: PageParams,
): Promise<DeliveryRow[]> {
  const params: unknown[] = [webhookId];
  const where = ['webhook_id = $1'];
  where.push(...equalityFilters(f, ['status', 'event_type'], '', params));
  const p = pageSql(page, 'id', params);
  return (
    await db.query<DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE ${where.join(' AND ')} AND ${p.where} ${p.tail}`, params)
  ).rows;
}

export async function attemptsOf(db: Queryable, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (!deliveryIds.length) return [];
  return (
    await db.query<AttemptRow>(
      'SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY delivery_id, number',
      [deliveryIds],
    )
  ).rows;
}

/** Makes a finished or waiting delivery due at once; undefined while one is being sent. */
export async function requeueDelivery(db: Queryable, d: DeliveryRow): Promise<DeliveryRow | undefined> {
  const r = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries
     SET status = 'pending', next_attempt_at = NULL, completed_at = NULL, automatic = (status = 'pending' AND automatic),
         updated_at = now(), version = version + 1
     WHERE id = $1 AND version = $2 AND status <> 'sending' RETURNING *`,
    [d.id, d.version],
  );
  return r.rows[0];
}

/** Due at `$1`: pending and due, or sending with an expired lease (its worker died). */
const due = (t = '') =>
  `((${t}status = 'pending' AND (${t}next_attempt_at IS NULL OR ${t}next_attempt_at <= $1))
    OR (${t}status = 'sending' AND ${t}lease_until <= $1))`;

// Serialises claiming across processes (one relay at a time), so the per-endpoint and total
// bounds hold for the whole service, not per process.
const RELAY_LOCK = 720_514_001;

/**
 * Claims due deliveries (pending and due, or sending with an expired lease: a worker that
 * died) up to the bounds: at most `perEndpoint` in flight per endpoint and `total` in all.
 * The claim number goes up, so a stale worker's job changes nothing.
 */
export async function claimDueDeliveries(
  tx: Queryable,
  now: Date,
  leaseUntil: Date,
  bounds: { total: number; perEndpoint: number },
): Promise<{ id: string; claim: number }[]> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [RELAY_LOCK]);
  const r = await tx.query<{ id: string; claim: number }>(
    `WITH inflight AS (
       SELECT webhook_id, count(*)::int AS n FROM webhook_deliveries
       WHERE status = 'sending' AND lease_until > $1 GROUP BY webhook_id
     ), due AS (
       SELECT d.id, d.webhook_id, d.next_attempt_at,
              row_number() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at NULLS FIRST, d.id) AS rank
       FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.enabled
       WHERE ${due('d.')}
     ), picked AS (
       SELECT due.id FROM due LEFT JOIN inflight i ON i.webhook_id = due.webhook_id
       WHERE due.rank + coalesce(i.n, 0) <= $3
       ORDER BY due.next_attempt_at NULLS FIRST, due.id
       LIMIT greatest($4 - (SELECT coalesce(sum(n), 0) FROM inflight), 0)
     )
     UPDATE webhook_deliveries d SET status = 'sending', claim = d.claim + 1, lease_until = $2, updated_at = now()
     FROM picked WHERE d.id = picked.id
     RETURNING d.id, d.claim`,
    [now, leaseUntil, bounds.perEndpoint, bounds.total],
  );
  return r.rows;
}

/** Whether anything is due: a cheap look before taking the relay lock. */
export async function anyDue(db: Queryable, now: Date): Promise<boolean> {
  return (await db.query(`SELECT 1 FROM webhook_deliveries WHERE ${due()} LIMIT 1`, [now])).rows.length > 0;
}

/** A worker starts its claim: the lease restarts now. Undefined for a stale or finished claim. */
export async function startClaim(
  db: Queryable,
  id: string,
  claim: number,
  leaseUntil: Date,
): Promise<{ delivery: DeliveryRow; webhook: WebhookRow } | undefined> {
  const d = (
    await db.query<DeliveryRow>(
      `UPDATE webhook_deliveries SET lease_until = $3 WHERE id = $1 AND claim = $2 AND status = 'sending' RETURNING *`,
      [id, claim, leaseUntil],
    )
  ).rows[0];
  if (!d) return undefined;
  const w = (await db.query<WebhookRow>('SELECT * FROM webhooks WHERE id = $1', [d.webhook_id])).rows[0];
  return w ? { delivery: d, webhook: w } : undefined;
}

export const lockDelivery = async (tx: Queryable, id: string): Promise<DeliveryRow | undefined> =>
  (await tx.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [id])).rows[0];

export interface Outcome {
  status: DeliveryStatus;
  next_attempt_at: Date | null;
  completed_at: Date | null;
}

export async function recordAttempt(
  tx: Queryable,
  d: DeliveryRow,
  attempt: Omit<AttemptRow, 'delivery_id' | 'number' | 'next_attempt_at'>,
  outcome: Outcome | null,
): Promise<void> {
  const number = d.attempt_count + 1;
  await tx.query(
    `INSERT INTO webhook_attempts (delivery_id, number, started_at, duration_ms, status_code, error, response_excerpt, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      d.id,
      number,
      attempt.started_at,
      attempt.duration_ms,
      attempt.status_code,
      attempt.error,
      attempt.response_excerpt,
      outcome?.next_attempt_at ?? null,
    ],
  );
  // A stale claim (its lease expired and another worker took over) records what it saw only.
  await tx.query(
    `UPDATE webhook_deliveries SET attempt_count = $2, last_status_code = $3, last_error = $4,
       status = coalesce($5, status), next_attempt_at = CASE WHEN $5::text IS NULL THEN next_attempt_at ELSE $6 END,
       completed_at = CASE WHEN $5::text IS NULL THEN completed_at ELSE $7 END,
       lease_until = CASE WHEN $5::text IS NULL THEN lease_until ELSE NULL END,
       updated_at = now(), version = version + 1
     WHERE id = $1`,
    [d.id, number, attempt.status_code, attempt.error, outcome?.status ?? null, outcome?.next_attempt_at, outcome?.completed_at],
  );
}

/** Finished deliveries past retention, with their attempts. */
export const pruneDeliveries = (db: Queryable, olderThan: Date) =>
  db.query('DELETE FROM webhook_deliveries WHERE completed_at < $1', [olderThan]);

/** Deliveries by status, for /metrics. */
export async function deliveryCounts(db: Queryable): Promise<[{ status: string }, number][]> {
  const r = await db.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status',
  );
  const counts = new Map(r.rows.map((row) => [row.status, row.n]));
  return ['pending', 'sending', 'succeeded', 'failed'].map((status) => [{ status }, counts.get(status) ?? 0]);
}
