import type { AgentUnit, AgentWithdrawal } from '../provisioning/agent-units.js';
import { removeWithdrawnFiles } from '../provisioning/withdrawn-files.js';
import type { AgentDrivers } from './drivers.js';
import { withdrawMail } from './mail.js';

/** Whether a unit the agent keeps belongs to the account. */
export const ofAccount = (unit: AgentUnit, accountId: string): boolean =>
  unit.kind === 'web' || unit.kind === 'mail' ? unit.spec.account_id === accountId : unit.key === accountId;

/**
 * Takes a terminated account off this server: its sites stop being served and its mail domains
 * received (the ones this agent was handed), its cron jobs and SSH access stop, then its pools and Unix user go, its databases and
 * users, and its files.
 */
export async function withdrawAccount(
  o: {
    dataDir: string;
    drivers: AgentDrivers;
  },
  spec: AgentWithdrawal,
  units: AgentUnit[],
): Promise<void> {
  if (spec.roles.includes('web')) {
    for (const unit of units)
      if (unit.kind === 'web' && unit.spec.account_id === spec.account_id) await o.drivers.web.removeSite(unit.key);
    await o.drivers.cron.removeAccount(spec.username);
    await o.drivers.ssh.removeAccount(spec.username);
    await o.drivers.php.removeAccount(spec.username);
  }
  if (spec.roles.includes('mail')) await withdrawMail({ dataDir: o.dataDir, mail: o.drivers.mail }, spec.account_id, units);
  if (spec.roles.includes('database')) await o.drivers.database.removeAccount(`${spec.username}_`);
  await removeWithdrawnFiles(o.dataDir, spec.account_id, spec.roles);
}
