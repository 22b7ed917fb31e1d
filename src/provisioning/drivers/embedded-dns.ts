import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic, writeFileIfChanged } from '../atomic-write.js';
import type { DnsDriver } from '../driver.js';
import { renderZoneFile, type Zone } from '../render/zone-file.js';
import { signZoneFile } from '../render/zone-signing.js';

/**
 * Renders each zone to `<dataDir>/rendered/dns/<zone>.zone` (a signed zone signed with BIND's
 * `dnssec-signzone`) and a `zones.conf` that lists them in BIND syntax, so an authoritative
 * server can load the directory. Serves nothing itself.
 */
export class EmbeddedDnsDriver implements DnsDriver {
  readonly name = 'embedded';
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = path.resolve(dataDir, 'rendered', 'dns');
  }

  async applyZone(zone: Zone): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = this.zoneFile(zone.name);
    const content = renderZoneFile(zone);
    await writeFileIfChanged(file, zone.dnssec ? await signZoneFile(zone.name, content, zone.dnssec) : content);
    await this.writeIndex();
  }

  async removeZone(name: string): Promise<void> {
    await rm(this.zoneFile(name), { force: true });
    await this.writeIndex();
  }

  private zoneFile(name: string): string {
    // Zone names are validated A-labels ([a-z0-9.-]); basename() keeps any surprise inside the dir.
    return path.join(this.dir, `${path.basename(name)}.zone`);
  }

  private async writeIndex(): Promise<void> {
    const zones = (await readdir(this.dir).catch(() => [] as string[])).filter((f) => f.endsWith('.zone')).sort();
    const conf = zones
      .map((f) => `zone "${f.slice(0, -'.zone'.length)}" { type master; file "${path.join(this.dir, f)}"; };`)
      .join('\n');
    await writeFileAtomic(path.join(this.dir, 'zones.conf'), conf ? `${conf}\n` : '');
  }
}
