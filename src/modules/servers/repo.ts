import type { Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { type PageParams, pageSql } from '../../db/paging.js';
import type { Role, ServerFields, ServerListQuery } from './schemas.js';

/** The id of the installation's own machine (migration 0026), applied in-process. */
export const LOCAL_SERVER_ID = 'srv_00000000000000000000000000';

export interface ServerRow {
  id: string;
  name: string;
  roles: Role[];
  ipv4: string | null;
  ipv6: string | null;
  capacity_accounts: number;
  capacity_disk_bytes: string | null;
  placement: 'enabled' | 'disabled';
  enrolled: boolean;
  draining: boolean;
  decommissioned_at: string | null;
  last_seen_at: string | null;
  agent_version: string | null;
  timezone: string | null;
  announced_status: string | null;
  disk_bytes_used: string;
  enrolment_token_hash: string | null;
  enrolment_expires_at: string | null;
  certificate_serial: string | null;
  certificate_not_after: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** Servers are the operator's alone: nobody else sees one. */
const reach = (caller: Caller) => (caller.principal.kind === 'operator' ? 'TRUE' : 'FALSE');

export async function insertServer(
  tx: Queryable,
  id: string,
  f: ServerFields,
  enrolment: { tokenHash: string; expiresAt: Date },
): Promise<ServerRow> {
  const r = await tx.query<ServerRow>(
    `INSERT INTO servers (id, name, roles, ipv4, ipv6, capacity_accounts, capacity_disk_bytes, placement,
       enrolment_token_hash, enrolment_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
    [
      id,
      f.name,
      f.roles,
      f.ipv4,
      f.ipv6,
      f.capacity.accounts,
      f.capacity.disk_bytes ?? null,
      f.placement,
      enrolment.tokenHash,
      enrolment.expiresAt.toISOString(),
    ],
  );
  return r.rows[0] as ServerRow;
}

export async function findServer(db: Queryable, caller: Caller, id: string): Promise<ServerRow | undefined> {
  return (await db.query<ServerRow>(`SELECT * FROM servers WHERE id = $1 AND ${reach(caller)}`, [id])).rows[0];
}

export async function findServerById(db: Queryable, id: string): Promise<ServerRow | undefined> {
  return (await db.query<ServerRow>('SELECT * FROM servers WHERE id = $1', [id])).rows[0];
}

export async function listServers(
  db: Queryable,
  caller: Caller,
  filter: Omit<ServerListQuery, 'limit' | 'cursor'>,
  page: PageParams,
  /** A further condition (the derived status), given the query's parameters to add to. */
  condition?: (params: unknown[]) => string,
): Promise<ServerRow[]> {
  const params: unknown[] = [];
  const where = [reach(caller)];
  if (filter.role) where.push(`$${params.push(filter.role)} = ANY (roles)`);
  if (condition) where.push(condition(params));
  const p = pageSql(page, 'id', params);
  const r = await db.query<ServerRow>(`SELECT * FROM servers WHERE ${where.join(' AND ')} AND ${p.where} ${p.tail}`, params);
  return r.rows;
}

/** Updates when the version still matches; undefined when it changed meanwhile. */
export async function updateServer(tx: Queryable, id: string, version: number, f: ServerFields): Promise<ServerRow | undefined> {
  const r = await tx.query<ServerRow>(
    `UPDATE servers SET name = $3, roles = $4, ipv4 = $5, ipv6 = $6, capacity_accounts = $7, capacity_disk_bytes = $8,
       placement = $9, updated_at = now(), version = version + 1
     WHERE id = $1 AND version = $2 RETURNING *`,
    [id, version, f.name, f.roles, f.ipv4, f.ipv6, f.capacity.accounts, f.capacity.disk_bytes ?? null, f.placement],
  );
  return r.rows[0];
}

export const deleteServer = (tx: Queryable, id: string) => tx.query('DELETE FROM servers WHERE id = $1', [id]);

/** A new enrolment token replaces any earlier one; the certificate stays valid until the new one is issued. */
export async function setEnrolmentToken(tx: Queryable, id: string, tokenHash: string, expiresAt: Date): Promise<ServerRow> {
  const r = await tx.query<ServerRow>(
    `UPDATE servers SET enrolment_token_hash = $2, enrolment_expires_at = $3, updated_at = now(), version = version + 1
     WHERE id = $1 RETURNING *`,
    [id, tokenHash, expiresAt.toISOString()],
  );
  return r.rows[0] as ServerRow;
}

/**
 * Spends an enrolment token: one UPDATE that matches only an unexpired token, so two agents
 * racing with the same token cannot both enrol. The issued certificate's serial replaces the
 * previous one (which is revoked by that).
 */
export async function spendEnrolmentToken(tx: Queryable, tokenHash: string, now: Date): Promise<ServerRow | undefined> {
  const r = await tx.query<ServerRow>(
    `UPDATE servers SET enrolment_token_hash = NULL, enrolment_expires_at = NULL
     WHERE enrolment_token_hash = $1 AND enrolment_expires_at > $2 RETURNING *`,
    [tokenHash, now.toISOString()],
  );
  return r.rows[0];
}

/** The agent's certificate: the only one its listener accepts from now on. */
export async function setCertificate(tx: Queryable, id: string, serial: string, notAfter: Date): Promise<void> {
  await tx.query(
    `UPDATE servers SET certificate_serial = $2, certificate_not_after = $3, enrolled = true, updated_at = now(),
       version = version + 1 WHERE id = $1`,
    [id, serial, notAfter.toISOString()],
  );
}

/** A poll of the agent: it is seen now, running `agent.version` in `agent.timezone` (null: not said). */
export async function markSeen(
  db: Queryable,
  id: string,
  agent: { version: string; timezone: string | null; diskBytesUsed: number },
  now: Date,
): Promise<void> {
  await db.query('UPDATE servers SET last_seen_at = $2, agent_version = $3, disk_bytes_used = $4, timezone = $5 WHERE id = $1', [
    id,
    now.toISOString(),
    agent.version,
    agent.diskBytesUsed,
    agent.timezone,
  ]);
}

/** The enrolled servers other than the local one (or only `id`): those whose status an event announces. */
export async function enrolledRemoteServers(db: Queryable, id?: string): Promise<ServerRow[]> {
  return (
    await db.query<ServerRow>('SELECT * FROM servers WHERE enrolled AND id <> $1 AND ($2::text IS NULL OR id = $2)', [
      LOCAL_SERVER_ID,
      id ?? null,
    ])
  ).rows;
}

/** Records the status an event announced; false when another process announced it first. */
export async function setAnnouncedStatus(db: Queryable, id: string, from: string | null, to: string): Promise<boolean> {
  const r = await db.query(
    'UPDATE servers SET announced_status = $3 WHERE id = $1 AND announced_status IS NOT DISTINCT FROM $2',
    [id, from, to],
  );
  return r.rowCount === 1;
}

/** A server starts draining: its row as it is now, or undefined when it was draining already. */
export async function startDraining(tx: Queryable, id: string): Promise<ServerRow | undefined> {
  return (
    await tx.query<ServerRow>(
      'UPDATE servers SET draining = true, updated_at = now(), version = version + 1 WHERE id = $1 AND NOT draining RETURNING *',
      [id],
    )
  ).rows[0];
}

/** The servers draining and not yet decommissioned. */
export async function drainingServerIds(db: Queryable): Promise<string[]> {
  return (
    await db.query<{ id: string }>('SELECT id FROM servers WHERE draining AND decommissioned_at IS NULL ORDER BY id')
  ).rows.map((r) => r.id);
}

/** A drained server becomes decommissioned, once: its row, or undefined when it was already. */
export async function setDecommissioned(tx: Queryable, id: string, at: Date): Promise<ServerRow | undefined> {
  return (
    await tx.query<ServerRow>(
      `UPDATE servers SET decommissioned_at = $2, updated_at = now(), version = version + 1
       WHERE id = $1 AND draining AND decommissioned_at IS NULL RETURNING *`,
      [id, at],
    )
  ).rows[0];
}

/**
 * The servers new accounts may go to for `role`, in the order of the default policy: placement
 * enabled, not draining, enrolled (the local one always is), fewest accounts first. Locked, so
 * concurrent creations count one at a time.
 */
export async function placementCandidates(tx: Queryable, role: Role): Promise<ServerRow[]> {
  return (
    await tx.query<ServerRow>(
      `SELECT * FROM servers WHERE $1 = ANY (roles) AND placement = 'enabled' AND NOT draining AND enrolled
       ORDER BY id FOR UPDATE`,
      [role],
    )
  ).rows;
}

/** What the database keeps counted of each server (migration 0044): accounts placed there, their units by state. */
export interface ServerCounts {
  accounts: number;
  in_sync: number;
  pending: number;
  error: number;
}

export async function serverCounts(db: Queryable, ids: string[]): Promise<Map<string, ServerCounts>> {
  const r = await db.query<ServerCounts & { server_id: string }>(
    `SELECT server_id, sum(accounts)::int AS accounts, sum(in_sync)::int AS in_sync, sum(pending)::int AS pending,
       sum(error)::int AS error
     FROM server_counts WHERE server_id = ANY($1) GROUP BY server_id`,
    [ids],
  );
  return new Map(r.rows.map(({ server_id, ...counts }) => [server_id, counts]));
}

/**
 * Each server's counts folded into one row. The rows a concurrent change adds meanwhile are not
 * seen by the statement, so stay as they are; a second fold waits for the first, then finds its
 * rows gone.
 */
export async function foldServerCounts(db: Queryable): Promise<void> {
  await db.query(
    `WITH folded AS (DELETE FROM server_counts RETURNING *)
     INSERT INTO server_counts (server_id, accounts, in_sync, pending, error)
     SELECT server_id, sum(accounts), sum(in_sync), sum(pending), sum(error) FROM folded GROUP BY server_id
     HAVING (sum(accounts), sum(in_sync), sum(pending), sum(error)) <> (0, 0, 0, 0)`,
  );
}
