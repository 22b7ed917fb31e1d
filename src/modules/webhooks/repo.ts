import type { Caller, PrincipalKind } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { equalityFilters, pageSql, type PageParams } from '../../db/paging.js';
import type { Webhook, WebhookListQuery } from './schemas.js';

export interface WebhookRow {
  id: string;
  principal_kind: PrincipalKind;
  reseller_id: string | null;
  account_id: string | null;
  account_ids: string[] | null;
  url: string;
  description: string;
  event_types: Webhook['event_types'];
  enabled: boolean;
  disabled_reason: Webhook['disabled_reason'];
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/**
 * An endpoint is in reach of its owner and of the principals above it (a reseller sees its
 * accounts' endpoints). A token narrowed to some accounts sees the endpoints of those accounts
 * and the endpoints narrowed to them.
 */
function reach(caller: Caller, params: unknown[]): string {
  const p = (v: unknown) => `$${params.push(v)}`;
  const parts: string[] = [];
  if (caller.principal.kind === 'reseller') parts.push(`reseller_id = ${p(caller.principal.id)}`);
  if (caller.principal.kind === 'account') parts.push(`account_id = ${p(caller.principal.id)}`);
  if (caller.accountIds) {
    const ids = p(caller.accountIds);
    parts.push(`(account_id = ANY(${ids}::text[]) OR account_ids <@ ${ids}::text[])`);
  }
  return parts.length ? parts.join(' AND ') : 'TRUE';
}

export type NewWebhook = Pick<
  WebhookRow,
  'id' | 'principal_kind' | 'reseller_id' | 'account_id' | 'account_ids' | 'url' | 'description' | 'event_types' | 'enabled'
> & { secret_sealed: string; created_by: string };

export async function insertWebhook(db: Queryable, w: NewWebhook): Promise<WebhookRow> {
  const r = await db.query<WebhookRow>(
    `INSERT INTO webhooks (id, principal_kind, reseller_id, account_id, account_ids, url, description, event_types, enabled, secret_sealed, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [
      w.id,
      w.principal_kind,
      w.reseller_id,
      w.account_id,
      w.account_ids,
      w.url,
      w.description,
      w.event_types,
      w.enabled,
      w.secret_sealed,
      w.created_by,
    ],
  );
  return r.rows[0] as WebhookRow;
}

export async function findWebhook(db: Queryable, caller: Caller, id: string): Promise<WebhookRow | undefined> {
  const params: unknown[] = [id];
  return (await db.query<WebhookRow>(`SELECT * FROM webhooks WHERE id = $1 AND ${reach(caller, params)}`, params)).rows[0];
}

export async function listWebhooks(
  db: Queryable,
  caller: Caller,
  filter: Omit<WebhookListQuery, 'limit' | 'cursor'>,
  page: PageParams,
) {
  const params: unknown[] = [];
  const where = [reach(caller, params), ...equalityFilters(filter, ['enabled'], '', params)];
  const p = pageSql(page, 'id', params);
  return (await db.query<WebhookRow>(`SELECT * FROM webhooks WHERE ${where.join(' AND ')} AND ${p.where} ${p.tail}`, params))
    .rows;
}

export type WebhookChange = Partial<
  Pick<WebhookRow, 'url' | 'description' | 'event_types' | 'enabled' | 'disabled_reason' | 'secret_sealed'>
> & {
  previous_secret_sealed?: string | null;
  previous_secret_expires_at?: Date | null;
};

/** Applies a change when the row is still at `version`; undefined when it moved on. */
export async function updateWebhook(db: Queryable, id: string, version: number, change: WebhookChange) {
  const params: unknown[] = [id, version];
  // An empty merge patch ({}) changes no field but is still a write: version and updated_at move.
  const sets = [...Object.entries(change).map(([col, value]) => `${col} = $${params.push(value)}`), 'updated_at = now()'];
  const r = await db.query<WebhookRow>(
    `UPDATE webhooks SET ${sets.join(', ')}, version = version + 1
     WHERE id = $1 AND version = $2 RETURNING *`,
    params,
  );
  return r.rows[0];
}

/** Disables an enabled endpoint; undefined when it already was (or is gone). */
export async function disableWebhook(tx: Queryable, id: string, reason: string): Promise<WebhookRow | undefined> {
  const r = await tx.query<WebhookRow>(
    `UPDATE webhooks SET enabled = false, disabled_reason = $2, updated_at = now(), version = version + 1
     WHERE id = $1 AND enabled RETURNING *`,
    [id, reason],
  );
  return r.rows[0];
}

export const deleteWebhook = async (db: Queryable, id: string, version: number): Promise<boolean> =>
  (await db.query('DELETE FROM webhooks WHERE id = $1 AND version = $2', [id, version])).rowCount > 0;

/** The endpoints an event goes to: enabled, subscribed to its type, and reaching its account. */
export async function subscribedWebhooks(
  tx: Queryable,
  e: { type: string; accountId: string | null; resellerId: string | null },
): Promise<string[]> {
  const r = await tx.query<{ id: string }>(
    `SELECT id FROM webhooks
     WHERE enabled AND ($1 = ANY(event_types) OR '*' = ANY(event_types))
       AND CASE principal_kind WHEN 'operator' THEN TRUE WHEN 'reseller' THEN reseller_id = $2 ELSE account_id = $3 END
       AND (account_ids IS NULL OR $3 = ANY(account_ids))`,
    [e.type, e.resellerId, e.accountId],
  );
  return r.rows.map((row) => row.id);
}
