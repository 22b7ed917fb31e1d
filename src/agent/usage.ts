import path from 'node:path';
import { mailRoot, siteDir } from '../layout.js';
import { directoryBytes } from '../lib/disk.js';
import type { AgentMeasurement, AgentUnit } from '../provisioning/agent-units.js';
import type { DatabaseDriver, WebDriver } from '../provisioning/driver.js';

/**
 * What this server holds of the units it was handed, measured as the control plane measures its
 * own: each site's files (its live release and what the site wrote), each mailbox's files, and
 * the size of each database (from its MariaDB, as the local meter has it), and what each site sent
 * per day as its web server logged it.
 */
export async function measureUnits(
  dataDir: string,
  drivers: { database: Pick<DatabaseDriver, 'measure'>; web: Pick<WebDriver, 'collectTraffic'> },
  units: AgentUnit[],
): Promise<AgentMeasurement[]> {
  const measured: AgentMeasurement[] = [];
  const databases = new Set<string>();
  const traffic = new Map<string, { day: string; bytes: number }[]>();
  for (const { site_id, day, bytes } of (await drivers.web.collectTraffic?.()) ?? [])
    traffic.set(site_id, [...(traffic.get(site_id) ?? []), { day, bytes }]);
  for (const unit of units) {
    if (unit.kind === 'web' && !unit.spec.removed) {
      const bytes = await directoryBytes(siteDir(dataDir, unit.spec.account_id, unit.spec.site_id));
      const sent = traffic.get(unit.spec.site_id);
      measured.push({ kind: 'web', key: unit.spec.site_id, bytes, ...(sent && { traffic: sent }) });
    } else if (unit.kind === 'mail' && unit.spec.enabled && !unit.spec.removed) {
      const root = mailRoot(dataDir, unit.spec.account_id, unit.spec.domain.name);
      for (const { id } of unit.spec.domain.mailboxes)
        measured.push({ kind: 'mail', key: id, bytes: await directoryBytes(path.join(root, path.basename(id))) });
    } else if (unit.kind === 'database') for (const d of unit.spec.databases) databases.add(d.name);
  }
  if (databases.size > 0)
    for (const [name, bytes] of await drivers.database.measure())
      if (databases.has(name)) measured.push({ kind: 'database', key: name, bytes });
  return measured;
}
