import type { Db, Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';
import { accountHome } from '../../layout.js';
import type { AgentUnitSource } from '../../provisioning/agent-units.js';
import type { PhpDriver, SshDriver } from '../../provisioning/driver.js';
import type { SshAccessMode, SshUnitSpec } from '../../provisioning/render/ssh.js';
import { type AccountUnitRow, accountUnits } from '../servers/index.js';
import { recordLogins } from './logins.js';
import * as repo from './repo.js';

/** The unit as its apply reads it: the access set and the most its plan allows. */
interface Unit extends AccountUnitRow {
  access: SshAccessMode;
  plan_access: SshAccessMode;
}

/** An account's SSH access and keys are one unit (its key file, groups and chroot link), with its state in ssh_units. */
export const sshUnits = accountUnits<'ssh', Unit>({
  table: 'ssh_units',
  role: 'web',
  queue: JOBS.sshApply,
  kind: 'ssh',
  columns: ', u.access, p.ssh_access AS plan_access',
  joins: 'JOIN plans p ON p.id = a.plan_id',
});

const RANK: Record<SshAccessMode, number> = { disabled: 0, sftp: 1, shell: 2 };
/** The lesser of two modes. */
export const capAccess = (wanted: SshAccessMode, allowed: SshAccessMode): SshAccessMode =>
  RANK[wanted] <= RANK[allowed] ? wanted : allowed;

/** Marks the account's SSH unit changed (setting its `access` when given) and queues its apply. */
export const touchSshUnit = (tx: Queryable, jobs: JobQueue, account: { id: string; username: string }, access?: SshAccessMode) =>
  sshUnits.touch(tx, jobs, account, access ? { access, updated_at: new Date().toISOString() } : {});

/** What the account's web server must hold: no access while suspended, never more than its plan allows. */
async function specOf(db: Queryable, unit: Unit): Promise<SshUnitSpec> {
  const keys = await repo.keysOfAccount(db, unit.account_id);
  return {
    account_id: unit.account_id,
    username: unit.username,
    access: unit.account_status === 'active' ? capAccess(unit.access, unit.plan_access) : 'disabled',
    frozen: unit.account_status === 'frozen',
    keys: keys.map((k) => ({ key: k.public_key, allowed_from: k.allowed_from })),
  };
}

/** The `ssh.apply` job: the account's Unix user exists (SSH logs in as it), then its access is exactly its unit. */
export const sshReconciler = (db: Db, driver: SshDriver, php: PhpDriver, dataDir: string) =>
  sshUnits.reconciler(db, {
    async apply(unit) {
      const home = accountHome(dataDir, unit.account_id);
      const user = await php.ensureUser(unit.username, home);
      await driver.applyAccount({ ...(await specOf(db, unit)), user, home });
    },
    remove: (username) => driver.removeAccount(username),
  });

/** The SSH units of the accounts whose web server is a server, as its agent pulls them and reports back; its logins. */
export const sshAgentUnits: AgentUnitSource = { ...sshUnits.agentSource(specOf), logins: recordLogins };
