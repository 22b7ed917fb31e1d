import type { Db, Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';
import { accountHome } from '../../layout.js';
import { isAccountUsername } from '../../lib/account-username.js';
import type { AgentUnitSource } from '../../provisioning/agent-units.js';
import { applyUnit } from '../../provisioning/apply-unit.js';
import type { PhpDriver, SshDriver } from '../../provisioning/driver.js';
import type { SshAccessMode, SshUnitSpec } from '../../provisioning/render/ssh.js';
import { accountUnits, handedToAgent } from '../servers/index.js';
import { recordLogins } from './logins.js';
import * as repo from './repo.js';

/** An account's SSH access and keys are one unit (its key file, groups and chroot link), with its state in ssh_units. */
export const sshUnits = accountUnits('ssh_units', 'web', JOBS.sshApply);

const RANK: Record<SshAccessMode, number> = { disabled: 0, sftp: 1, shell: 2 };
/** The lesser of two modes. */
export const capAccess = (wanted: SshAccessMode, allowed: SshAccessMode): SshAccessMode =>
  RANK[wanted] <= RANK[allowed] ? wanted : allowed;

/** Marks the account's SSH unit changed (setting its `access` when given) and queues its apply. */
export const touchSshUnit = (tx: Queryable, jobs: JobQueue, account: { id: string; username: string }, access?: SshAccessMode) =>
  sshUnits.touch(tx, jobs, account, access ? { access, updated_at: new Date().toISOString() } : {});

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
  report: (db, serverId, report) => sshUnits.report(db, serverId, report),
  logins: recordLogins,
};
