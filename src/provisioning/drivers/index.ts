import path from 'node:path';
import type { Config } from '../../config.js';
import { installedPhpVersions, sortVersions } from '../../lib/php-versions.js';
import { CronFilesDriver } from '../cron/driver.js';
import type { CronDriver, DatabaseDriver, DnsDriver, MailDriver, PhpDriver, SshDriver, WebDriver } from '../driver.js';
import { DovecotPostfixMailDriver } from './dovecot-postfix.js';
import { EmbeddedDatabaseDriver } from './embedded-db.js';
import { EmbeddedDnsDriver } from './embedded-dns.js';
import { EmbeddedMailDriver } from './embedded-mail.js';
import { EmbeddedPhpDriver } from './embedded-php.js';
import { EmbeddedWebDriver } from './embedded-web.js';
import { MariaDbDatabaseDriver } from './mariadb.js';
import { NginxWebDriver } from './nginx.js';
import { SshFilesDriver } from './openssh.js';
import { PhpFpmDriver } from './php-fpm.js';
import { PowerDnsDriver } from './powerdns.js';

/** The drivers the configuration chooses (loadConfig has checked each real one has its settings). */
export function driversFor(config: Config): {
  dns: DnsDriver;
  web: WebDriver;
  mail: MailDriver;
  db: DatabaseDriver;
  php: PhpDriver;
  cron: CronDriver;
  ssh: SshDriver;
} {
  const { drivers, powerdns, nginx, mailServer, dataDir, webListen, webListenTls, mariadb, php, cron, ssh } = config;
  const phpVersions = php.versions ? sortVersions(php.versions) : installedPhpVersions();
  const listen = { listen: webListen, listenTls: webListenTls };
  return {
    dns:
      drivers.dns === 'powerdns'
        ? new PowerDnsDriver({
            apiUrl: powerdns.apiUrl as string,
            apiKey: powerdns.apiKey as string,
            serverId: powerdns.serverId,
          })
        : new EmbeddedDnsDriver(dataDir),
    web:
      drivers.web === 'nginx'
        ? new NginxWebDriver(dataDir, { bin: nginx.bin, conf: nginx.conf, sitesDir: nginx.sitesDir as string }, listen)
        : new EmbeddedWebDriver(dataDir, listen),
    mail:
      drivers.mail === 'dovecot-postfix'
        ? new DovecotPostfixMailDriver(dataDir, { ...mailServer, mapsDir: mailServer.mapsDir as string })
        : new EmbeddedMailDriver(dataDir, { relayPort: mailServer.relayPort }),
    db:
      drivers.db === 'mariadb'
        ? new MariaDbDatabaseDriver({ ...mariadb, url: mariadb.url as string })
        : new EmbeddedDatabaseDriver(dataDir, mariadb.userHost),
    php: drivers.php === 'php-fpm' ? new PhpFpmDriver(phpVersions, php) : new EmbeddedPhpDriver(dataDir, phpVersions, php),
    cron: cronDriver(dataDir, drivers.cron === 'cron' ? cron.dir : null),
    ssh: sshDriver(dataDir, drivers.ssh === 'openssh' ? ssh : null),
  };
}

/**
 * OpenSSH configured under `ssh.dir` (`/etc/ssh`), or (null) the embedded default rendering the
 * same files into the data directory.
 */
export const sshDriver = (dataDir: string, ssh: { dir: string; pidFile: string; log: string | null } | null): SshDriver => {
  const dir = ssh?.dir ?? path.resolve(dataDir, 'rendered', 'ssh');
  return new SshFilesDriver(ssh ? 'openssh' : 'embedded', {
    dropIn: path.join(dir, 'sshd_config.d', 'berth.conf'),
    keysDir: path.join(dir, 'berth', 'keys'),
    chrootDir: path.join(dir, 'berth', 'chroot'),
    sshd: ssh && { config: path.join(dir, 'sshd_config'), pidFile: ssh.pidFile },
    log: ssh?.log ? { file: ssh.log, offsetFile: path.resolve(dataDir, 'ssh', 'log-offset.json') } : null,
  });
};

/** Debian's cron reading `cronDir`, or (null) the embedded default rendering into the data directory. */
export const cronDriver = (dataDir: string, cronDir: string | null): CronDriver =>
  new CronFilesDriver(cronDir ? 'cron' : 'embedded', {
    cronDir: cronDir ?? path.resolve(dataDir, 'rendered', 'cron.d'),
    stateDir: path.resolve(dataDir, 'cron'),
    runs: cronDir !== null,
  });
