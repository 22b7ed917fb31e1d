import type { Queryable } from '../../db/client.js';
import { LOCAL_SERVER_ID } from './repo.js';

/** The channel that wakes the agent listeners' long-polls: its payload is the server's id. */
export const AGENT_UNITS_CHANNEL = 'berth_agent_units';

/** Wakes the long-poll of a server's agent, in whichever process holds it. */
export const wakeAgent = (db: Queryable, serverId: string) =>
  db.query('SELECT pg_notify($1, $2)', [AGENT_UNITS_CHANNEL, serverId]);

/** Whether a unit placed on this server is its agent's to apply; if so, that agent is woken to pull it. */
export async function handedToAgent(db: Queryable, serverId: string): Promise<boolean> {
  if (serverId === LOCAL_SERVER_ID) return false;
  await wakeAgent(db, serverId);
  return true;
}
