import type { Queryable } from '../../db/client.js';
import type { AgentUnit, AgentUnitSource } from '../../provisioning/agent-units.js';
import { wakeAgent } from './wake.js';

/** Where a moved account's roles went: the new web and mail servers' addresses (null: the role stayed). */
export interface ForwardTargets {
  web: string | null;
  mail: string | null;
}

/**
 * Hands the server an account left a forward to its new servers (its sites proxied, its mail
 * relayed), in the caller's transaction; the agent's poll wakes when it commits. Handing it again
 * changes nothing once applied; the account's withdrawal from the server ends it.
 */
export async function forwardAccount(tx: Queryable, serverId: string, accountId: string, to: ForwardTargets): Promise<void> {
  await tx.query(
    `INSERT INTO agent_forwards (server_id, account_id, web, mail) VALUES ($1, $2, $3, $4)
     ON CONFLICT (server_id, account_id) DO UPDATE SET web = EXCLUDED.web, mail = EXCLUDED.mail,
       applied = agent_forwards.applied AND agent_forwards.web IS NOT DISTINCT FROM EXCLUDED.web
         AND agent_forwards.mail IS NOT DISTINCT FROM EXCLUDED.mail`,
    [serverId, accountId, to.web, to.mail],
  );
  await wakeAgent(tx, serverId);
}

interface ForwardRow {
  account_id: string;
  web: string | null;
  mail: string | null;
}

const UNAPPLIED = 'FROM agent_forwards WHERE server_id = $1 AND NOT applied';

/** The forwards as the agent listener hands them out, until applied (one generation: a forward is handed once). */
export const forwardUnits: AgentUnitSource = {
  kind: 'forward',
  waiting: `EXISTS (SELECT 1 ${UNAPPLIED})`,
  async pending(db, serverId) {
    const rows = await db.query<ForwardRow>(`SELECT account_id, web, mail ${UNAPPLIED} ORDER BY account_id`, [serverId]);
    return rows.rows.map((r): AgentUnit => ({ kind: 'forward', key: r.account_id, generation: 1, spec: r }));
  },
  async report(db, serverId, report) {
    if (report.generation > 1) return 'future';
    // Withdrawn meanwhile (the row is gone): nothing to record.
    if (report.error === undefined)
      await db.query('UPDATE agent_forwards SET applied = true WHERE server_id = $1 AND account_id = $2', [serverId, report.key]);
    return 'recorded';
  },
};
