import type { Queryable } from '../../db/client.js';
import type { AgentUnit, AgentUnitSource } from '../../provisioning/agent-units.js';

/**
 * A server's pending units, source by source in their order. Every source's `waiting` is asked
 * first, in one statement; a source is asked for its units only where that says it may have
 * some. An idle server's poll, which asks again at every wait's end (the level-triggered
 * resync), is then one statement rather than one or more per source.
 */
export function pendingOf(db: Queryable, sources: readonly AgentUnitSource[]) {
  const probe = `SELECT ARRAY[${sources.map((s) => `(${s.waiting})`).join(', ')}]::boolean[] AS waiting`;
  return async (serverId: string): Promise<AgentUnit[]> => {
    const flags = (await db.query<{ waiting: boolean[] }>(probe, [serverId])).rows[0]?.waiting ?? [];
    const asked = sources.filter((_, i) => flags[i] !== false);
    return (await Promise.all(asked.map((s) => s.pending(db, serverId)))).flat();
  };
}
