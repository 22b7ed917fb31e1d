import { accountHome } from '../layout.js';
import type { CronDriver, PhpDriver } from '../provisioning/driver.js';
import type { CronRunRecord, CronUnitSpec } from '../provisioning/render/cron.js';

/** An account's cron unit, as the control plane applies its own: its Unix user first, then its files. */
export async function applyCronUnit(
  o: { dataDir: string; drivers: { php: PhpDriver; cron: CronDriver } },
  spec: CronUnitSpec,
): Promise<void> {
  const home = accountHome(o.dataDir, spec.account_id);
  const user = await o.drivers.php.ensureUser(spec.username, home);
  await o.drivers.cron.applyAccount({ ...spec, user, home });
}

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
