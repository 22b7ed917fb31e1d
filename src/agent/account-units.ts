import { accountHome, loginHome } from '../layout.js';
import type { CronDriver, PhpDriver, SshDriver } from '../provisioning/driver.js';
import type { CronRunRecord, CronUnitSpec } from '../provisioning/render/cron.js';
import type { SshLogin, SshUnitSpec } from '../provisioning/render/ssh.js';

/** An account's unit that runs as its Unix user (cron, SSH), as the control plane applies its own: the user first. */
async function asAccountUser(
  o: { dataDir: string; drivers: { php: PhpDriver } },
  spec: { account_id: string; username: string },
  apply: (user: string, home: string) => Promise<void>,
): Promise<void> {
  const home = accountHome(o.dataDir, spec.account_id);
  await apply(await o.drivers.php.ensureUser(spec.username, home), home);
}

export const applyCronUnit = (o: { dataDir: string; drivers: { php: PhpDriver; cron: CronDriver } }, spec: CronUnitSpec) =>
  asAccountUser(o, spec, (user, home) => o.drivers.cron.applyAccount({ ...spec, user, home: loginHome(home) }));

export const applySshUnit = (o: { dataDir: string; drivers: { php: PhpDriver; ssh: SshDriver } }, spec: SshUnitSpec) =>
  asAccountUser(o, spec, (user, home) => o.drivers.ssh.applyAccount({ ...spec, user, home }));

/**
 * The runs this server's runner recorded since, sent with each poll; the control plane answers
 * the ids it stored, which are forgotten here. A failure is tried again with the next poll.
 */
export async function sendCronRuns(
  cron: CronDriver,
  send: (runs: CronRunRecord[]) => Promise<{ status: number; body?: { stored?: string[]; detail?: string } }>,
): Promise<void> {
  const runs = await cron.collect();
  if (runs.length === 0) return;
  const sent = await send(runs.slice(0, 500));
  if (sent.status !== 200) throw new Error(`cron runs refused (${sent.status}): ${sent.body?.detail ?? ''}`);
  await cron.acknowledge(sent.body?.stored ?? []);
}

/**
 * The key logins this server's sshd accepted since the last poll, for the keys' `last_used_at`.
 * What a failed send carried is not sent again: the next login is.
 */
export async function sendSshLogins(
  ssh: SshDriver,
  send: (logins: SshLogin[]) => Promise<{ status: number; body?: { detail?: string } }>,
): Promise<void> {
  const logins = await ssh.collectLogins();
  for (let i = 0; i < logins.length; i += 1000) {
    const sent = await send(logins.slice(i, i + 1000));
    if (sent.status !== 204) throw new Error(`ssh logins refused (${sent.status}): ${sent.body?.detail ?? ''}`);
  }
}
