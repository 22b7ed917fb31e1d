import { accountHome, loginHome } from '../layout.js';
import type { CronDriver, PhpDriver, SshDriver } from '../provisioning/driver.js';
import type { CronRunRecord, CronUnitSpec } from '../provisioning/render/cron.js';
import type { SshUnitSpec } from '../provisioning/render/ssh.js';

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
