import { SYSTEM_TIME_ZONE } from '../../lib/time-zone.js';
import { type ServerRow, LOCAL_SERVER_ID } from './repo.js';
import type { ServerStatus } from './schemas.js';

/** An agent's long-poll waits at most this long; every poll is a heartbeat. */
export const AGENT_WAIT_MS = 30_000;
/** Three missed waits make a server unreachable. */
const UNREACHABLE_AFTER_MS = 3 * AGENT_WAIT_MS;

/**
 * A server's status, derived rather than stored, so no timer has to flip it: the local server is
 * always online; a server without an enrolled agent is pending; a draining one says so (and a
 * decommissioned one, drained to its last account); the
 * others are online while their agent has polled within three waits.
 */
export function serverStatus(row: ServerRow, now: Date): ServerStatus {
  if (row.decommissioned_at) return 'decommissioned';
  if (row.draining) return 'draining';
  if (row.id === LOCAL_SERVER_ID) return 'online';
  if (!row.enrolled) return 'pending_enrolment';
  return agentReachable(row, now) ? 'online' : 'unreachable';
}

/**
 * Whether the server's agent is polling (the local server is always here), whatever its status
 * says besides: a draining server's agent still takes tasks (its accounts' moves copy from it).
 */
export function agentReachable(row: ServerRow, now: Date): boolean {
  if (row.id === LOCAL_SERVER_ID) return true;
  const seen = row.last_seen_at ? new Date(row.last_seen_at).getTime() : 0;
  return row.enrolled && now.getTime() - seen <= UNREACHABLE_AFTER_MS;
}

/**
 * The same rule as a condition on `servers`, so a list filtered by status pages over the rows
 * that have it (`params` gets its values).
 */
export function statusCondition(status: ServerStatus, now: Date, params: unknown[]): string {
  const local = () => `id = $${params.push(LOCAL_SERVER_ID)}`;
  const recent = () => `last_seen_at >= $${params.push(new Date(now.getTime() - UNREACHABLE_AFTER_MS))}`;
  switch (status) {
    case 'decommissioned':
      return 'decommissioned_at IS NOT NULL';
    case 'draining':
      return 'draining AND decommissioned_at IS NULL';
    case 'online':
      return `NOT draining AND (${local()} OR (enrolled AND ${recent()}))`;
    case 'pending_enrolment':
      return `NOT draining AND NOT ${local()} AND NOT enrolled`;
    case 'unreachable':
      return `NOT draining AND NOT ${local()} AND enrolled AND (last_seen_at IS NULL OR NOT ${recent()})`;
  }
}

/** The time zone a server runs in: this machine's for the local server, else as its agent reported it. */
export const serverTimeZone = (row: Pick<ServerRow, 'id' | 'timezone'>): string | null =>
  row.id === LOCAL_SERVER_ID ? SYSTEM_TIME_ZONE : row.timezone;
