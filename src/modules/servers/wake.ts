import type { Queryable } from '../../db/client.js';

/** The channel that wakes the agent listeners' long-polls: its payload is the server's id. */
export const AGENT_UNITS_CHANNEL = 'berth_agent_units';

/** Wakes the long-poll of a server's agent, in whichever process holds it. */
export const wakeAgent = (db: Queryable, serverId: string) =>
  db.query('SELECT pg_notify($1, $2)', [AGENT_UNITS_CHANNEL, serverId]);
