import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { webLogDir } from '../../layout.js';
import { mutex } from '../../lib/mutex.js';
import { runCommand } from '../../lib/run-command.js';
import { writeFileAtomic } from '../atomic-write.js';
import type { WebDriver } from '../driver.js';
import { renderServerBlock, servesFrozen, type SiteSpec } from '../render/nginx.js';
import { TrafficLog, type SiteTraffic } from '../traffic-log.js';
import { removeCertificateFiles, siteConfFile, writeSiteFiles, type Listen } from './embedded-web.js';
import { reloadNginx } from './nginx-reload.js';

/**
 * How long a freeze (and the thaw) waits for nginx's workers of the configuration before it. Not
 * longer: a worker serving any long download on the server stays until it ends, and the account
 * answers 503 meanwhile; a PHP request of the account still running past it is ended with its
 * worker (PhpDriver.endRequests).
 */
const FREEZE_DRAIN_MS = 2000;

export interface NginxOptions {
  /** The nginx binary. */
  bin: string;
  /** The main configuration (`nginx -c`); null: nginx's compiled-in default. */
  conf: string | null;
  /** The directory the main configuration includes (`include <dir>/*.conf;`). */
  sitesDir: string;
}

/**
 * Serves sites with a running nginx: each server block is written atomically into `sitesDir`,
 * the whole configuration checked with `nginx -t`, and nginx reloaded. A block nginx rejects
 * is replaced by the file that was there before (or removed), so a bad render never stays in
 * place to break the next reload. Changes run one at a time: `nginx -t` checks every site.
 */
export class NginxWebDriver implements WebDriver {
  readonly name = 'nginx';
  private readonly exclusive = mutex();
  private readonly counting = mutex();
  private readonly logDir: string;
  private readonly traffic: TrafficLog;

  constructor(
    private readonly dataDir: string,
    private readonly o: NginxOptions,
    private readonly listen: Listen,
  ) {
    this.logDir = webLogDir(dataDir);
    this.traffic = new TrafficLog(this.logDir, {
      reopen: async () => void (await this.nginx(['-s', 'reopen'], 'nginx -s reopen')),
    });
  }

  applySite(site: SiteSpec): Promise<void> {
    return this.exclusive(async () => {
      const options = { ...(await writeSiteFiles(this.dataDir, site, this.listen)), logDir: this.logDir };
      await mkdir(this.logDir, { recursive: true, mode: 0o750 });
      await this.replace(siteConfFile(this.o.sitesDir, site.id), renderServerBlock(site, options));
    });
  }

  removeSite(id: string): Promise<void> {
    return this.exclusive(async () => {
      await this.replace(siteConfFile(this.o.sitesDir, id), null);
      await removeCertificateFiles(this.dataDir, id);
    });
  }

  collectTraffic(): Promise<SiteTraffic[]> {
    return this.counting(() => this.traffic.collect());
  }

  /**
   * Puts `content` in place (null: removes the file), checked; then reloads — also when nothing
   * changed, so a retry after a failed reload reloads — and waits until the reload took effect.
   */
  private async replace(file: string, content: string | null): Promise<void> {
    const previous = await readFile(file, 'utf8').catch(() => null);
    if (previous !== content) {
      await put(file, content);
      try {
        await this.nginx(['-t', '-q'], 'nginx -t');
      } catch (err) {
        await put(file, previous);
        throw err;
      }
    }
    // A freeze, and the change after it, are in effect once nothing answers by the configuration
    // before them (a PHP request begun before the freeze has ended; no frozen worker answers 503
    // after the thaw), or FREEZE_DRAIN_MS have passed.
    const frozen = [previous, content].some((block) => block !== null && servesFrozen(block));
    await reloadNginx(this.o.conf, () => this.nginx(['-s', 'reload'], 'nginx -s reload'), {
      drainMs: frozen ? FREEZE_DRAIN_MS : 0,
      program: path.basename(this.o.bin),
    });
  }

  private nginx(args: string[], label: string): Promise<string> {
    return runCommand(this.o.bin, this.o.conf ? ['-c', this.o.conf, ...args] : args, label);
  }
}

const put = (file: string, content: string | null) =>
  content === null ? rm(file, { force: true }) : writeFileAtomic(file, content);
