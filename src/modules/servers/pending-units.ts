import type { Queryable } from '../../db/client.js';
import type { AgentUnit, AgentUnitSource } from '../../provisioning/agent-units.js';

/**
 * A server's pending units, source by source in their order. Every source's `waiting` is asked
 * first, in one statement; a source is asked for its units only where that says it may have
 * some (or where it declares none). An idle server's poll, which asks again at every wait's end
 * (the level-triggered resync), is then one statement rather than one or more per source.
 */
export function pendingOf(db: Queryable, sources: readonly AgentUnitSource[]) {
  const probed = sources.filter((s) => s.waiting !== undefined);
  const probe = `SELECT ARRAY[${probed.map((s) => `(${s.waiting})`).join(', ')}]::boolean[] AS waiting`;
  return async (serverId: string): Promise<AgentUnit[]> => {
    const flags = probed.length > 0 ? ((await db.query<{ waiting: boolean[] }>(probe, [serverId])).rows[0]?.waiting ?? []) : [];
    const waiting = new Set(probed.filter((_, i) => flags[i] !== false));
    const asked = sources.filter((s) => s.waiting === undefined || waiting.has(s));
    return (await Promise.all(asked.map((s) => s.pending(db, serverId)))).flat();
  };
}
