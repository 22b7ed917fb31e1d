import type { Db, Queryable } from '../../db/client.js';
import { unitState } from '../../db/unit-state.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';
import { accountHome } from '../../layout.js';
import { isAccountUsername } from '../../lib/account-username.js';
import type { AgentUnitSource } from '../../provisioning/agent-units.js';
import { applyUnit } from '../../provisioning/apply-unit.js';
import type { PhpDriver, SshDriver } from '../../provisioning/driver.js';
import type { SshAccessMode, SshUnitSpec } from '../../provisioning/render/ssh.js';
import { handedToAgent } from '../servers/index.js';
import * as repo from './repo.js';

/** An account's SSH access and keys are one unit (its key file, groups and chroot link), with its state in ssh_units. */
export const sshUnits = unitState('ssh_units', 'account_id');

const RANK: Record<SshAccessMode, number> = { disabled: 0, sftp: 1, shell: 2 };
/** The lesser of two modes. */
export const capAccess = (wanted: SshAccessMode, allowed: SshAccessMode): SshAccessMode =>
  RANK[wanted] <= RANK[allowed] ? wanted : allowed;

/**
 * Marks the account's SSH unit changed inside the caller's transaction (setting its `access` when
 * given) and queues its apply; the job data carries the username so that a unit whose account
 * is gone can still be withdrawn.
 */
export async function touchSshUnit(
  tx: Queryable,
  jobs: JobQueue,
  account: { id: string; username: string },
  access?: SshAccessMode,
): Promise<void> {
  const r = await tx.query<{ server_id: string }>(
    `INSERT INTO ssh_units (account_id, access) VALUES ($1, coalesce($2::text, 'disabled'))
     ON CONFLICT (account_id) DO UPDATE SET generation = ssh_units.generation + 1, sync_state = 'pending',
       access = coalesce($2::text, ssh_units.access),
       updated_at = CASE WHEN $2::text IS NULL THEN ssh_units.updated_at ELSE now() END
     RETURNING (SELECT web_server_id FROM accounts WHERE id = $1) AS server_id`,
    [account.id, access ?? null],
  );
  await wakeOnCommit(tx, r.rows[0]?.server_id);
  await jobs.send(tx, JOBS.sshApply, { account_id: account.id, username: account.username });
}

/** Another server's agent pulls the change as the transaction commits, not after its apply job. */
const wakeOnCommit = async (tx: Queryable, serverId: string | undefined) => {
  if (serverId) await handedToAgent(tx, serverId);
};

/** Renders the unit again if the account has one (a suspension, a plan allowing less, a termination). */
export async function touchExistingSshUnit(tx: Queryable, jobs: JobQueue, accountId: string): Promise<void> {
  const r = await tx.query<{ username: string; server_id: string }>(
    `UPDATE ssh_units u SET generation = generation + 1, sync_state = 'pending' FROM accounts a
     WHERE u.account_id = $1 AND a.id = u.account_id RETURNING a.username, a.web_server_id AS server_id`,
    [accountId],
  );
  const username = r.rows[0]?.username;
  await wakeOnCommit(tx, r.rows[0]?.server_id);
  if (username) await jobs.send(tx, JOBS.sshApply, { account_id: accountId, username });
}

interface Unit {
  account_id: string;
  username: string;
  account_status: string;
  web_server_id: string;
  access: SshAccessMode;
  plan_access: SshAccessMode;
  generation: number;
  applied_generation: number;
}

const UNIT_SELECT = `SELECT u.account_id, a.username, a.status AS account_status, a.web_server_id, u.access,
    p.ssh_access AS plan_access, u.generation, u.applied_generation
  FROM ssh_units u JOIN accounts a ON a.id = u.account_id JOIN plans p ON p.id = a.plan_id`;

/** The unit as committed: FOR SHARE waits for a change still being written (jobs/names.ts, UNIT_KEYS). */
async function loadUnit(db: Queryable, accountId: string): Promise<Unit | undefined> {
  return (await db.query<Unit>(`${UNIT_SELECT} WHERE u.account_id = $1 FOR SHARE OF u`, [accountId])).rows[0];
}

/** What the account's web server must hold: no access while suspended, never more than its plan allows. */
async function specOf(db: Queryable, unit: Unit): Promise<SshUnitSpec> {
  const keys = await repo.keysOfAccount(db, unit.account_id);
  return {
    account_id: unit.account_id,
    username: unit.username,
    access: unit.account_status === 'active' ? capAccess(unit.access, unit.plan_access) : 'disabled',
    keys: keys.map((k) => ({ key: k.public_key, allowed_from: k.allowed_from })),
  };
}

/**
 * The `ssh.apply` job: the account's Unix user exists (SSH logs in as it), then its access is
 * exactly its unit; an account that is gone has its key file and chroot link withdrawn. One
 * apply of an account at a time across processes; failures are recorded on the unit and retried.
 */
export function sshReconciler(db: Db, driver: SshDriver, php: PhpDriver, dataDir: string) {
  return async (data: Record<string, unknown>): Promise<void> => {
    const accountId = String(data.account_id);
    const username = String(data.username);
    if (!isAccountUsername(username)) throw new Error(`ssh.apply: not an account username: ${username.slice(0, 40)}`);
    await db.withSessionLock(`ssh.apply:${accountId}`, async () => {
      const unit = await loadUnit(db, accountId);
      if (!unit) {
        await driver.removeAccount(username);
        return;
      }
      if (await handedToAgent(db, unit.web_server_id)) return;
      await applyUnit(
        unit,
        async () => {
          const home = accountHome(dataDir, accountId);
          const user = await php.ensureUser(unit.username, home);
          await driver.applyAccount({ ...(await specOf(db, unit)), user, home });
        },
        sshUnits.marks(db, accountId),
      );
    });
  };
}

/** The SSH units of the accounts whose web server is a server, as its agent pulls them and reports back. */
export const sshAgentUnits: AgentUnitSource = {
  kind: 'ssh',
  async pending(db, serverId) {
    const units = (
      await db.query<Unit>(
        `${UNIT_SELECT} WHERE a.web_server_id = $1 AND u.applied_generation < u.generation ORDER BY u.account_id`,
        [serverId],
      )
    ).rows;
    return Promise.all(
      units.map(async (unit) => ({
        kind: 'ssh' as const,
        key: unit.account_id,
        generation: unit.generation,
        spec: await specOf(db, unit),
      })),
    );
  },
  async report(db, serverId, report) {
    const unit = (await db.query<Unit>(`${UNIT_SELECT} WHERE u.account_id = $1`, [report.key])).rows[0];
    if (!unit || unit.web_server_id !== serverId) return 'foreign';
    if (report.generation > unit.generation) return 'future';
    const marks = sshUnits.marks(db, unit.account_id);
    await (report.error === undefined ? marks.applied(report.generation) : marks.failed(report.error));
    return 'recorded';
  },
};
