import type { Queryable } from '../../db/client.js';
import type { AgentUnit, AgentUnitSource } from '../../provisioning/agent-units.js';
import { isRole, type Role } from './schemas.js';
import { wakeAgent } from './wake.js';

/**
 * A terminated account's share of another server, or a moved one's of the server it left: no
 * unit names it there any more, so the server's agent is handed a withdrawal instead, named by the
 * account and the roles it held there, until it reports it done. Written in the termination's (or
 * the move's cleanup's) transaction; the agent's poll wakes when it commits.
 */
export async function withdrawAccount(
  tx: Queryable,
  serverId: string,
  account: { id: string; username: string },
  roles: Role[],
): Promise<void> {
  await tx.query(
    `INSERT INTO agent_withdrawals (server_id, account_id, username, roles) VALUES ($1, $2, $3, $4)
     ON CONFLICT (server_id, account_id) DO UPDATE
       SET roles = ARRAY(SELECT DISTINCT unnest(agent_withdrawals.roles || EXCLUDED.roles) ORDER BY 1)`,
    [serverId, account.id, account.username, roles],
  );
  // A forward to where the account went ends with it.
  await tx.query('DELETE FROM agent_forwards WHERE server_id = $1 AND account_id = $2', [serverId, account.id]);
  await wakeAgent(tx, serverId);
}

interface WithdrawalRow {
  server_id: string;
  account_id: string;
  username: string;
  roles: string[];
}

const OF_SERVER = 'FROM agent_withdrawals WHERE server_id = $1';

/** The withdrawals as the agent listener hands them out (one generation: a withdrawal never changes meaning). */
export const withdrawalUnits: AgentUnitSource = {
  kind: 'withdrawal',
  waiting: `EXISTS (SELECT 1 ${OF_SERVER})`,
  async pending(db, serverId) {
    const rows = await db.query<WithdrawalRow>(`SELECT account_id, username, roles ${OF_SERVER} ORDER BY account_id`, [serverId]);
    return rows.rows.map((r): AgentUnit => ({
      kind: 'withdrawal',
      key: r.account_id,
      generation: 1,
      spec: {
        account_id: r.account_id,
        username: r.username,
        roles: r.roles.filter(isRole),
      },
    }));
  },
  async report(db, serverId, report) {
    const rows = (await db.query<WithdrawalRow>('SELECT server_id FROM agent_withdrawals WHERE account_id = $1', [report.key]))
      .rows;
    // Done already (a report sent again) changes nothing; another server's is not this one's to end.
    if (rows.length > 0 && !rows.some((r) => r.server_id === serverId)) return 'foreign';
    if (report.generation > 1) return 'future';
    if (report.error === undefined)
      await db.query('DELETE FROM agent_withdrawals WHERE server_id = $1 AND account_id = $2', [serverId, report.key]);
    return 'recorded';
  },
};
