import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { DEFAULT_MAIL_HASH_COST } from './lib/mail-password.js';

/** One typed, frozen configuration built from BERTH_* environment variables. */
const LogLevel = Type.Unsafe<'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'>({
  type: 'string',
  enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
});
const driver = <T extends string>(...names: T[]) => Type.Unsafe<T>({ type: 'string', enum: names });
const Path = Type.String({ minLength: 1 });

/** A `host:port` setting, parsed. */
const HostPort = Type.Object({ host: Type.String({ minLength: 1 }), port: Type.Integer({ minimum: 0, maximum: 65535 }) });

const ConfigSchema = Type.Object({
  host: Type.String({ minLength: 1 }),
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  dataDir: Type.String({ minLength: 1 }),
  databaseUrl: Type.Union([Type.String({ pattern: '^postgres(ql)?://' }), Type.Null()]),
  bootstrapToken: Type.Union([Type.String({ minLength: 32, pattern: '^[\\x21-\\x7e]+$' }), Type.Null()]),
  logLevel: LogLevel,
  baseUrl: Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()]),
  // 32 bytes, base64 or hex: seals stored secrets (webhook signing secrets). Unset: a key file in the data dir.
  secretKey: Type.Union([Type.String({ pattern: '^([A-Za-z0-9+/]{43}=|[0-9a-fA-F]{64})$' }), Type.Null()]),
  webhooks: Type.Object({
    allowHosts: Type.Array(Type.String({ minLength: 1 })),
    timeoutMs: Type.Integer({ minimum: 100, maximum: 60_000 }),
    // Deliveries in flight across every process, and per endpoint; workers per process.
    concurrency: Type.Integer({ minimum: 1, maximum: 1000 }),
    perEndpoint: Type.Integer({ minimum: 1, maximum: 100 }),
    workers: Type.Integer({ minimum: 1, maximum: 100 }),
    relayIntervalMs: Type.Integer({ minimum: 10, maximum: 60_000 }),
  }),
  drivers: Type.Object({
    dns: driver('embedded', 'powerdns'),
    web: driver('embedded', 'nginx'),
    mail: driver('embedded', 'dovecot-postfix'),
    db: driver('embedded', 'mariadb'),
    php: driver('embedded', 'php-fpm'),
    cron: driver('embedded', 'cron'),
    ssh: driver('embedded', 'openssh'),
  }),
  // The real daemons' settings, read only when their driver is chosen (docs/Guides/real-daemons.md).
  powerdns: Type.Object({
    apiUrl: Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()]),
    apiKey: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    serverId: Type.String({ minLength: 1 }),
  }),
  // `trafficMs`: how often each process counts the sites' access logs (bandwidth).
  nginx: Type.Object({
    bin: Path,
    conf: Type.Union([Path, Type.Null()]),
    sitesDir: Type.Union([Path, Type.Null()]),
    trafficMs: Type.Integer({ minimum: 100, maximum: 3_600_000 }),
  }),
  // nginx `listen` arguments of every server block.
  webListen: Type.Array(Type.String({ pattern: '^[^\\s;{}"\'\\\\$]+$' }), { minItems: 1 }),
  webListenTls: Type.Array(Type.String({ pattern: '^[^\\s;{}"\'\\\\$]+$' }), { minItems: 1 }),
  // ACME when a directory is configured, else the internal CA.
  acme: Type.Object({
    directoryUrl: Type.Union([Type.String({ pattern: '^https://' }), Type.Null()]),
    email: Type.Union([Type.String({ pattern: '^[^\\s@]+@[^\\s@]+$' }), Type.Null()]),
    eabKid: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    eabHmacKey: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    // A PEM file of roots to trust for the directory's own HTTPS (a private or test ACME server).
    caFile: Type.Union([Path, Type.Null()]),
  }),
  // How often each process looks for certificates due for renewal or a retry.
  certificateSchedulerMs: Type.Integer({ minimum: 10, maximum: 3_600_000 }),
  mailServer: Type.Object({
    mapsDir: Type.Union([Path, Type.Null()]),
    owner: Type.Union([Type.String({ pattern: '^\\d+:\\d+$' }), Type.Null()]),
    postfixConfigDir: Path,
    dovecotConf: Type.Union([Path, Type.Null()]),
    // OpenDKIM's pid file: it is told to re-read its KeyTable and SigningTable (SIGUSR1) after an apply.
    opendkimPid: Type.Union([Path, Type.Null()]),
    // The port the fleet's mail servers take SMTP on: a moved account's mail is relayed to the target's.
    relayPort: Type.Integer({ minimum: 1, maximum: 65_535 }),
  }),
  // an administrative account of the MariaDB server (all privileges, with GRANT OPTION).
  mariadb: Type.Object({
    url: Type.Union([Type.String({ pattern: '^(mysql|mariadb)://' }), Type.Null()]),
    // The host part of every user Berth makes ('user'@'<host>').
    userHost: Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9.:%_-]+$' }),
    dumpBin: Path,
  }),
  // The provider's mail host, for mail Berth sends itself (cron jobs' notifications), and its sender.
  smtp: Type.Object({
    url: Type.Union([Type.String({ pattern: '^smtps?://' }), Type.Null()]),
    from: Type.String({ pattern: '^[^\\s@<>]+@[^\\s@<>]+$', maxLength: 254 }),
  }),
  // Debian's cron reads the accounts' files from `dir`; each process collects the runs it recorded every `collectMs`.
  cron: Type.Object({ dir: Path, collectMs: Type.Integer({ minimum: 100, maximum: 60_000 }) }),
  // OpenSSH's directory (its sshd_config, the drop-in in sshd_config.d, Berth's keys and chroot links under berth/),
  // its pid file, the port customers are told to connect to,
  // and sshd's log, read every `collectMs` for the key logins it accepted (null: not read).
  ssh: Type.Object({
    dir: Path,
    pidFile: Path,
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    log: Type.Union([Path, Type.Null()]),
    collectMs: Type.Integer({ minimum: 100, maximum: 600_000 }),
  }),
  // PHP-FPM's files, `{version}` standing for `8.2`; null versions: those installed.
  php: Type.Object({
    versions: Type.Union([Type.Array(Type.String({ pattern: '^\\d+\\.\\d+$' }), { minItems: 1 }), Type.Null()]),
    poolDir: Path,
    fpmConf: Path,
    fpmPid: Path,
    socketDir: Path,
    // The group nginx runs as: pool sockets and the sites' files are given to it.
    webGroup: Type.String({ pattern: '^[a-z_][a-z0-9_-]{0,31}$' }),
  }),
  // How often each process measures the databases' sizes.
  databaseMeterMs: Type.Integer({ minimum: 10, maximum: 3_600_000 }),
  // How often each process measures every account's usage (GET /v1/usage).
  usageMeterMs: Type.Integer({ minimum: 10, maximum: 86_400_000 }),
  // How often each process re-queues the applies that failed (the daemon was down, say).
  resyncMs: Type.Integer({ minimum: 10, maximum: 3_600_000 }),
  moveTtlS: Type.Integer({ minimum: 5, maximum: 86_400 }),
  // Who is asked for a signed zone's DS at its parent (`host` or `host:port`); unset: the system's resolver.
  dnssecResolver: Type.Union([HostPort, Type.Null()]),
  moveConcurrency: Type.Integer({ minimum: 1, maximum: 100 }),
  jobPollMs: Type.Integer({ minimum: 500, maximum: 3_600_000 }),
  // How long a job's lease lasts without its process renewing it (then another process resumes it).
  jobLeaseMs: Type.Integer({ minimum: 1000, maximum: 600_000 }),
  // A failed job's first retry waits this long (up to twice, jittered); each next one twice as long.
  jobRetryS: Type.Integer({ minimum: 1, maximum: 3600 }),
  // Crash tests: the move steps after whose work the process kills itself, once each (see moves/runner.ts).
  crashAfterMoveSteps: Type.Array(Type.String({ pattern: '^[a-z_]+$' })),
  // Crash tests: the move steps halfway through which it does so (after their first effect).
  crashInsideMoveSteps: Type.Array(Type.String({ pattern: '^[a-z_]+$' })),
  nameservers: Type.Array(Type.String({ minLength: 1 })),
  webIpv4: Type.Union([Type.String({ format: 'ipv4' }), Type.Null()]),
  webIpv6: Type.Union([Type.String({ format: 'ipv6' }), Type.Null()]),
  // The host mail clients and other servers reach: the MX of every mail-enabled domain,
  // and the name of the submission service's certificate. Unset: `mail.<domain>` at the web
  // addresses, if there are any.
  mailHost: Type.Union([Type.String({ format: 'hostname', maxLength: 253, pattern: '\\.' }), Type.Null()]),
  rateLimit: Type.Object({
    store: Type.Unsafe<'memory' | 'database'>({ type: 'string', enum: ['memory', 'database'] }),
    readPerMinute: Type.Integer({ minimum: 1 }),
    writePerMinute: Type.Integer({ minimum: 1 }),
    concurrent: Type.Integer({ minimum: 1 }),
    authFailuresPerMinute: Type.Integer({ minimum: 1 }),
  }),
  tokenCacheTtlMs: Type.Integer({ minimum: 0 }),
  // argon2id cost of mailbox password hashes; libsodium (Dovecot) accepts m >= 8 KiB.
  mailHash: Type.Object({
    memoryKib: Type.Integer({ minimum: 8, maximum: 4_194_304 }),
    timeCost: Type.Integer({ minimum: 1, maximum: 100 }),
  }),
  deployMaxMb: Type.Integer({ minimum: 1, maximum: 65536 }),
  // How often each process looks for due backup schedules.
  backupSchedulerMs: Type.Integer({ minimum: 10, maximum: 3_600_000 }),
  jobs: Type.Boolean(),
  // The agent listener: mutual TLS for the hosting servers' agents; null: none.
  agentListen: Type.Union([HostPort, Type.Null()]),
  // The URL agents reach that listener at, as the enrolment command names it.
  agentUrl: Type.Union([Type.String({ pattern: '^https://' }), Type.Null()]),
});
export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {}

const ENV_NAMES: Record<string, string> = {
  host: 'BERTH_HOST',
  port: 'BERTH_PORT',
  dataDir: 'BERTH_DATA_DIR',
  databaseUrl: 'DATABASE_URL',
  bootstrapToken: 'BERTH_BOOTSTRAP_TOKEN (32+ printable characters)',
  logLevel: 'BERTH_LOG_LEVEL',
  baseUrl: 'BERTH_BASE_URL',
  secretKey: 'BERTH_SECRET_KEY (32 bytes as base64 or hex)',
  webhooks: 'BERTH_WEBHOOK_*',
  drivers: 'BERTH_DRIVER_DNS|WEB|MAIL|DB|PHP|CRON|SSH',
  ssh: 'BERTH_SSH_DIR / BERTH_SSH_PID_FILE / BERTH_SSH_PORT / BERTH_SSH_LOG / BERTH_SSH_COLLECT_MS',
  cron: 'BERTH_CRON_DIR / BERTH_CRON_COLLECT_MS',
  smtp: 'BERTH_SMTP_URL / BERTH_SMTP_FROM',
  php: 'BERTH_PHP_VERSIONS / BERTH_PHP_POOL_DIR / BERTH_PHP_FPM_CONF / BERTH_PHP_FPM_PID / BERTH_PHP_SOCKET_DIR / BERTH_PHP_WEB_GROUP',
  powerdns: 'BERTH_PDNS_API_URL / BERTH_PDNS_API_KEY / BERTH_PDNS_SERVER_ID',
  nginx: 'BERTH_NGINX_BIN / BERTH_NGINX_CONF / BERTH_NGINX_SITES_DIR / BERTH_NGINX_TRAFFIC_MS',
  webListen: 'BERTH_WEB_LISTEN',
  webListenTls: 'BERTH_WEB_LISTEN_TLS',
  acme: 'BERTH_ACME_DIRECTORY_URL / BERTH_ACME_EMAIL / BERTH_ACME_EAB_KID / BERTH_ACME_EAB_HMAC_KEY / BERTH_ACME_CA_FILE',
  certificateSchedulerMs: 'BERTH_CERTIFICATE_SCHEDULER_MS',
  mailServer:
    'BERTH_MAIL_MAPS_DIR / BERTH_MAIL_OWNER (uid:gid) / BERTH_POSTFIX_CONFIG_DIR / BERTH_DOVECOT_CONF / BERTH_OPENDKIM_PID / BERTH_MAIL_RELAY_PORT',
  mariadb: 'BERTH_MARIADB_URL / BERTH_MARIADB_USER_HOST / BERTH_MARIADB_DUMP',
  databaseMeterMs: 'BERTH_DATABASE_METER_MS',
  usageMeterMs: 'BERTH_USAGE_METER_MS',
  resyncMs: 'BERTH_RESYNC_MS',
  moveTtlS: 'BERTH_MOVE_TTL_S',
  dnssecResolver: 'BERTH_DNSSEC_RESOLVER (host or host:port)',
  moveConcurrency: 'BERTH_MOVE_CONCURRENCY',
  jobPollMs: 'BERTH_JOB_POLL_MS',
  jobLeaseMs: 'BERTH_JOB_LEASE_MS',
  jobRetryS: 'BERTH_JOB_RETRY_S',
  crashAfterMoveSteps: 'BERTH_CRASH_AFTER_MOVE_STEPS (step names, comma-separated)',
  crashInsideMoveSteps: 'BERTH_CRASH_INSIDE_MOVE_STEPS (step names, comma-separated)',
  webIpv4: 'BERTH_WEB_IPV4',
  webIpv6: 'BERTH_WEB_IPV6',
  mailHost: 'BERTH_MAIL_HOST',
  rateLimit: 'BERTH_RATE_LIMIT_*',
  mailHash: 'BERTH_MAIL_HASH_MEMORY_KIB / BERTH_MAIL_HASH_TIME_COST',
  deployMaxMb: 'BERTH_DEPLOY_MAX_MB',
  backupSchedulerMs: 'BERTH_BACKUP_SCHEDULER_MS',
  agentListen: 'BERTH_AGENT_LISTEN (host:port)',
  agentUrl: 'BERTH_AGENT_URL (https://...)',
};

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^(true|false|1|0)$/.test(raw)) throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  return raw === 'true' || raw === '1';
}

/** `host:port` (`[::1]:8443` for IPv6; with `defaultPort`, the port may be left out); unset: null. */
function hostPort(env: Env, name: string, defaultPort?: number): { host: string; port: number } | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+))(?::(\d{1,5}))?$/.exec(raw);
  const port = m?.[3] ?? defaultPort;
  if (!m || port === undefined) throw new ConfigError(`${name} must be host:port, got "${raw}"`);
  return { host: (m[1] ?? m[2]) as string, port: Number(port) };
}

/** Builds the config from an environment; throws ConfigError naming the bad variable. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Readonly<Config> {
  const config: Config = {
    host: env.BERTH_HOST || '127.0.0.1',
    port: int(env, 'BERTH_PORT', 8080),
    dataDir: env.BERTH_DATA_DIR || './data',
    databaseUrl: env.DATABASE_URL || null,
    bootstrapToken: env.BERTH_BOOTSTRAP_TOKEN || null,
    logLevel: (env.BERTH_LOG_LEVEL || 'info') as Config['logLevel'],
    baseUrl: env.BERTH_BASE_URL || null,
    secretKey: env.BERTH_SECRET_KEY || null,
    webhooks: {
      allowHosts: list(env.BERTH_WEBHOOK_ALLOW_HOSTS),
      timeoutMs: int(env, 'BERTH_WEBHOOK_TIMEOUT_MS', 10_000),
      concurrency: int(env, 'BERTH_WEBHOOK_CONCURRENCY', 16),
      perEndpoint: int(env, 'BERTH_WEBHOOK_CONCURRENCY_PER_ENDPOINT', 4),
      workers: int(env, 'BERTH_WEBHOOK_WORKERS', 8),
      relayIntervalMs: int(env, 'BERTH_WEBHOOK_RELAY_MS', 1000),
    },
    drivers: {
      dns: (env.BERTH_DRIVER_DNS || 'embedded') as 'embedded',
      web: (env.BERTH_DRIVER_WEB || 'embedded') as 'embedded',
      mail: (env.BERTH_DRIVER_MAIL || 'embedded') as 'embedded',
      db: (env.BERTH_DRIVER_DB || 'embedded') as 'embedded',
      php: (env.BERTH_DRIVER_PHP || 'embedded') as 'embedded',
      cron: (env.BERTH_DRIVER_CRON || 'embedded') as 'embedded',
      ssh: (env.BERTH_DRIVER_SSH || 'embedded') as 'embedded',
    },
    ssh: {
      dir: env.BERTH_SSH_DIR || '/etc/ssh',
      pidFile: env.BERTH_SSH_PID_FILE || '/run/sshd.pid',
      port: int(env, 'BERTH_SSH_PORT', 22),
      log: env.BERTH_SSH_LOG || null,
      collectMs: int(env, 'BERTH_SSH_COLLECT_MS', 10_000),
    },
    cron: { dir: env.BERTH_CRON_DIR || '/etc/cron.d', collectMs: int(env, 'BERTH_CRON_COLLECT_MS', 10_000) },
    smtp: {
      url: env.BERTH_SMTP_URL || null,
      from: env.BERTH_SMTP_FROM || `berth@${env.BERTH_MAIL_HOST?.toLowerCase().replace(/\.$/, '') || 'localhost.localdomain'}`,
    },
    powerdns: {
      apiUrl: env.BERTH_PDNS_API_URL || null,
      apiKey: env.BERTH_PDNS_API_KEY || null,
      serverId: env.BERTH_PDNS_SERVER_ID || 'localhost',
    },
    nginx: {
      bin: env.BERTH_NGINX_BIN || 'nginx',
      conf: env.BERTH_NGINX_CONF || null,
      sitesDir: env.BERTH_NGINX_SITES_DIR || null,
      trafficMs: int(env, 'BERTH_NGINX_TRAFFIC_MS', 60_000),
    },
    webListen: list(env.BERTH_WEB_LISTEN || '80,[::]:80'),
    webListenTls: list(env.BERTH_WEB_LISTEN_TLS || '443,[::]:443'),
    acme: {
      directoryUrl: env.BERTH_ACME_DIRECTORY_URL || null,
      email: env.BERTH_ACME_EMAIL || null,
      eabKid: env.BERTH_ACME_EAB_KID || null,
      eabHmacKey: env.BERTH_ACME_EAB_HMAC_KEY || null,
      caFile: env.BERTH_ACME_CA_FILE || null,
    },
    certificateSchedulerMs: int(env, 'BERTH_CERTIFICATE_SCHEDULER_MS', 60_000),
    mailServer: {
      mapsDir: env.BERTH_MAIL_MAPS_DIR || null,
      owner: env.BERTH_MAIL_OWNER || null,
      postfixConfigDir: env.BERTH_POSTFIX_CONFIG_DIR || '/etc/postfix',
      dovecotConf: env.BERTH_DOVECOT_CONF || null,
      opendkimPid: env.BERTH_OPENDKIM_PID || null,
      relayPort: int(env, 'BERTH_MAIL_RELAY_PORT', 25),
    },
    mariadb: {
      url: env.BERTH_MARIADB_URL || null,
      userHost: env.BERTH_MARIADB_USER_HOST || '%',
      dumpBin: env.BERTH_MARIADB_DUMP || 'mariadb-dump',
    },
    php: {
      versions: env.BERTH_PHP_VERSIONS ? list(env.BERTH_PHP_VERSIONS) : null,
      poolDir: env.BERTH_PHP_POOL_DIR || '/etc/php/{version}/fpm/pool.d',
      fpmConf: env.BERTH_PHP_FPM_CONF || '/etc/php/{version}/fpm/php-fpm.conf',
      fpmPid: env.BERTH_PHP_FPM_PID || '/run/php/php{version}-fpm.pid',
      socketDir: env.BERTH_PHP_SOCKET_DIR || '/run/php',
      webGroup: env.BERTH_PHP_WEB_GROUP || 'www-data',
    },
    databaseMeterMs: int(env, 'BERTH_DATABASE_METER_MS', 60_000),
    usageMeterMs: int(env, 'BERTH_USAGE_METER_MS', 900_000),
    resyncMs: int(env, 'BERTH_RESYNC_MS', 30_000),
    moveTtlS: int(env, 'BERTH_MOVE_TTL_S', 60),
    dnssecResolver: hostPort(env, 'BERTH_DNSSEC_RESOLVER', 53),
    moveConcurrency: int(env, 'BERTH_MOVE_CONCURRENCY', 2),
    jobPollMs: int(env, 'BERTH_JOB_POLL_MS', 2_000),
    jobLeaseMs: int(env, 'BERTH_JOB_LEASE_MS', 15_000),
    jobRetryS: int(env, 'BERTH_JOB_RETRY_S', 5),
    crashAfterMoveSteps: list(env.BERTH_CRASH_AFTER_MOVE_STEPS),
    crashInsideMoveSteps: list(env.BERTH_CRASH_INSIDE_MOVE_STEPS),
    nameservers: list(env.BERTH_NAMESERVERS || 'ns1.berth.invalid,ns2.berth.invalid'),
    webIpv4: env.BERTH_WEB_IPV4 || null,
    webIpv6: env.BERTH_WEB_IPV6 || null,
    mailHost: env.BERTH_MAIL_HOST?.toLowerCase().replace(/\.$/, '') || null,
    rateLimit: {
      store: (env.BERTH_RATE_LIMIT_STORE || 'memory') as 'memory',
      readPerMinute: int(env, 'BERTH_RATE_LIMIT_READ', 1200),
      writePerMinute: int(env, 'BERTH_RATE_LIMIT_WRITE', 240),
      concurrent: int(env, 'BERTH_RATE_LIMIT_CONCURRENT', 20),
      authFailuresPerMinute: int(env, 'BERTH_AUTH_FAILURES_PER_MINUTE', 20),
    },
    tokenCacheTtlMs: int(env, 'BERTH_TOKEN_CACHE_TTL_MS', 10_000),
    mailHash: {
      memoryKib: int(env, 'BERTH_MAIL_HASH_MEMORY_KIB', DEFAULT_MAIL_HASH_COST.memoryKib),
      timeCost: int(env, 'BERTH_MAIL_HASH_TIME_COST', DEFAULT_MAIL_HASH_COST.timeCost),
    },
    deployMaxMb: int(env, 'BERTH_DEPLOY_MAX_MB', 512),
    backupSchedulerMs: int(env, 'BERTH_BACKUP_SCHEDULER_MS', 15_000),
    jobs: bool(env, 'BERTH_JOBS', true),
    agentListen: hostPort(env, 'BERTH_AGENT_LISTEN'),
    agentUrl: env.BERTH_AGENT_URL || null,
    ...overrides,
  };
  const firstError = Value.Errors(ConfigSchema, config)[0];
  if (firstError) {
    const path = firstError.instancePath;
    const name = ENV_NAMES[path.split('/')[1] ?? ''] ?? path;
    throw new ConfigError(`${name} is invalid: ${firstError.message}`);
  }
  requireDriverSettings(config);
  return Object.freeze(config);
}

/** A real driver without the settings that reach its daemon is a start-up error, not a failing job. */
function requireDriverSettings(config: Config): void {
  const { drivers, powerdns, nginx, mailServer } = config;
  if (drivers.dns === 'powerdns' && (!powerdns.apiUrl || !powerdns.apiKey)) {
    throw new ConfigError('BERTH_DRIVER_DNS=powerdns needs BERTH_PDNS_API_URL and BERTH_PDNS_API_KEY');
  }
  if (drivers.web === 'nginx' && !nginx.sitesDir) throw new ConfigError('BERTH_DRIVER_WEB=nginx needs BERTH_NGINX_SITES_DIR');
  if (drivers.mail === 'dovecot-postfix' && !mailServer.mapsDir) {
    throw new ConfigError('BERTH_DRIVER_MAIL=dovecot-postfix needs BERTH_MAIL_MAPS_DIR');
  }
  if (drivers.db === 'mariadb' && !config.mariadb.url) throw new ConfigError('BERTH_DRIVER_DB=mariadb needs BERTH_MARIADB_URL');
  if (Boolean(config.acme.eabKid) !== Boolean(config.acme.eabHmacKey)) {
    throw new ConfigError('BERTH_ACME_EAB_KID and BERTH_ACME_EAB_HMAC_KEY go together');
  }
}
