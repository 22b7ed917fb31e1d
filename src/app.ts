import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import type { Contribution } from './contribution.js';
import type { Db } from './db/client.js';
import { installAuth } from './http/auth.js';
import { closeConnectionsOnClose } from './http/connections.js';
import { installCors } from './http/cors.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/errors.js';
import { installIdempotency, pruneIdempotencyKeys } from './http/idempotency.js';
import { metaRoutes } from './http/meta-routes.js';
import { createMetrics } from './http/metrics.js';
import { installNegotiation } from './http/negotiation.js';
import { installOpenApi } from './http/openapi.js';
import { panelRoutes } from './http/panel.js';
import { DatabaseBucketStore, MemoryBucketStore, pruneRateBuckets } from './http/rate-limit.js';
import { genRequestId, installRequestId } from './http/request-id.js';
import type { App } from './http/routes.js';
import { ProblemSchema } from './http/schemas.js';
import { plainJson } from './http/serialization.js';
import { installInputGuard, installValidation } from './http/validation.js';
import { DEPRECATIONS, installVersioning, type DeprecationRegistry } from './http/versioning.js';
import { HOUSEKEEPING_CRON, housekeepingWorker } from './jobs/housekeeping.js';
import { JOBS } from './jobs/names.js';
import { PgBossQueue, type JobQueue } from './jobs/queue.js';
import { systemClock, type Clock } from './lib/time.js';
import { accountsModule } from './modules/accounts/module.js';
import { diskMeter } from './modules/accounts/usage.js';
import { backupsModule } from './modules/backups/module.js';
import { LocalBackupStorage, type BackupStorage } from './modules/backups/storage.js';
import { cronModule } from './modules/cron/module.js';
import { databasesModule } from './modules/databases/module.js';
import { databaseBytes } from './modules/databases/repo.js';
import { databaseAccountHooks, databasePlanHooks } from './modules/databases/service.js';
import { databaseAgentUnits } from './modules/databases/unit.js';
import type { ServiceDeps } from './modules/deps.js';
import { domainsModule } from './modules/domains/module.js';
import { domainAccountHooks } from './modules/domains/service.js';
import { eventsModule } from './modules/events/module.js';
import { issuersModule } from './modules/issuers/module.js';
import { mailModule } from './modules/mail/module.js';
import { measuredMailBytes } from './modules/mail/repo.js';
import { mailAccountHooks, mailDomainHooks } from './modules/mail/service.js';
import { forwardsFollowTarget, movesModule } from './modules/moves/module.js';
import { operationsModule } from './modules/operations/module.js';
import { plansModule } from './modules/plans/module.js';
import { publishEvent } from './modules/publishing/index.js';
import { resellersModule } from './modules/resellers/module.js';
import { serversModule } from './modules/servers/module.js';
import { keptReleaseBytes } from './modules/sites/deployments/repo.js';
import { sitesModule } from './modules/sites/module.js';
import { writtenOnServers } from './modules/sites/repo.js';
import { siteAccountHooks, siteDomainHooks, sitePlanHooks } from './modules/sites/service.js';
import { sshModule } from './modules/ssh/module.js';
import { tokensModule } from './modules/tokens/module.js';
import { TokenResolver } from './modules/tokens/resolver.js';
import type { Lookup } from './modules/webhooks/address-policy.js';
import { webhooksModule } from './modules/webhooks/module.js';
import { webhookDocs } from './modules/webhooks/routes.js';
import type {
  CronDriver,
  DatabaseDriver,
  DnsDriver,
  MailDriver,
  PhpDriver,
  SshDriver,
  WebDriver,
} from './provisioning/driver.js';
import { driversFor } from './provisioning/drivers/index.js';
import { applyResync } from './provisioning/resync.js';

export interface AppDeps {
  config: Readonly<Config>;
  db: Db;
  clock?: Clock;
  /** A job queue; by default pg-boss on the same database, started with the app. */
  jobs?: JobQueue;
  deprecations?: DeprecationRegistry;
  /** The DNS driver; by default the one BERTH_DRIVER_DNS names. */
  dnsDriver?: DnsDriver;
  /** The mail driver; by default the one BERTH_DRIVER_MAIL names. */
  mailDriver?: MailDriver;
  /** The web driver; by default the one BERTH_DRIVER_WEB names. */
  webDriver?: WebDriver;
  /** The PHP driver; by default the one BERTH_DRIVER_PHP names. */
  phpDriver?: PhpDriver;
  /** The database driver; by default the one BERTH_DRIVER_DB names. */
  databaseDriver?: DatabaseDriver;
  /** The cron driver; by default the one BERTH_DRIVER_CRON names. */
  cronDriver?: CronDriver;
  /** The SSH driver; by default the one BERTH_DRIVER_SSH names. */
  sshDriver?: SshDriver;
  /** Backup storage; by default a directory under the data dir. */
  backupStorage?: BackupStorage;
  /** How webhook hosts resolve; by default the system resolver. */
  webhookLookup?: Lookup;
  /** Extra routes (tests register test-only routes here). */
  extraRoutes?: (app: App) => void;
  logger?: boolean;
  /** Where log lines go; by default standard output. */
  logStream?: { write(line: string): void };
}

/** Starts the agent listener of an app built with BERTH_AGENT_LISTEN, on that address; the port it got. */
export async function listenAgents(app: FastifyInstance, config: Readonly<Config>): Promise<number | null> {
  const listener = (app as FastifyInstance & { agentListener: FastifyInstance | null }).agentListener;
  if (!listener || !config.agentListen) return null;
  await listener.listen({ host: config.agentListen.host, port: config.agentListen.port });
  return (listener.server.address() as AddressInfo).port;
}

/** Builds the Fastify app with every plugin and route; does not listen (tests inject). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, db } = deps;
  const clock = deps.clock ?? systemClock;
  const app = Fastify({
    logger:
      deps.logger === false ? false : { level: config.logLevel, redact: ['req.headers.authorization'], stream: deps.logStream },
    genReqId: genRequestId,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    // A domain name (up to 253 characters) may stand in a path.
    routerOptions: { maxParamLength: 300 },
    frameworkErrors: frameworkErrors(config.baseUrl),
    clientErrorHandler: clientErrorHandler(config.baseUrl),
    ajv: { customOptions: { removeAdditional: false } },
    schemaController: { compilersFactory: { buildSerializer: plainJson } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  closeConnectionsOnClose(app);

  const metrics = createMetrics();
  const jobs =
    deps.jobs ??
    new PgBossQueue(db, {
      runWorkers: config.jobs,
      pollingIntervalSeconds: config.jobPollMs / 1000,
      leaseMs: config.jobLeaseMs,
      retryDelaySeconds: config.jobRetryS,
      onError: (err) => app.log.error({ err }, 'job queue error'),
      observer: metrics.jobs,
      log: (fields, message) => app.log.info(fields, message),
    });
  const resolver = new TokenResolver({
    db,
    clock,
    ttlMs: config.tokenCacheTtlMs,
    bootstrapToken: config.bootstrapToken,
    onBackgroundError: (err) => app.log.warn({ err }, 'background token work failed (a cache refresh or recording its use)'),
  });
  // An account's bytes outside its home's walk: databases as last measured, and what other
  // servers hold as their agents measured it. Both the usage and the quota meter count them; the
  // quota meter counts site releases from the sizes recorded when each was unpacked.
  const recordedElsewhere = [{ bytes: databaseBytes }, { bytes: measuredMailBytes }, { bytes: writtenOnServers }];
  const diskInUse = diskMeter(db, config.dataDir, [{ dir: 'sites', bytes: keptReleaseBytes }, ...recordedElsewhere]);
  const svc: ServiceDeps = { db, clock, config, jobs, resolver, diskInUse };
  const logError = (what: string) => (err: unknown) => app.log.error({ err }, what);

  // The modules, lowest first; a module built on others gets their services or hooks here.
  const drivers = driversFor(config);
  const domains = domainsModule(
    svc,
    { sites: siteDomainHooks(jobs), mail: mailDomainHooks(jobs, config.dataDir) },
    deps.dnsDriver ?? drivers.dns,
    (look) => app.log.info({ dnssec_parent_look: look }, 'DNSSEC: asked the parents of zones waiting on them'),
  );
  const php = deps.phpDriver ?? drivers.php;
  const mailDriver = deps.mailDriver ?? drivers.mail;
  const issuers = issuersModule(svc, mailDriver, logError('mail host certificate error'));
  const sites = sitesModule(
    svc,
    deps.webDriver ?? drivers.web,
    php,
    domains.acmeChallenges,
    issuers,
    logError('certificate renewal error'),
  );
  const mail = mailModule(svc, mailDriver);
  const databases = databasesModule(svc, deps.databaseDriver ?? drivers.db, logError('database meter error'));
  const cron = cronModule(
    svc,
    { cron: deps.cronDriver ?? drivers.cron, php },
    { error: logError('cron run collector error'), warn: (message) => app.log.warn(message) },
  );
  const ssh = sshModule(svc, { ssh: deps.sshDriver ?? drivers.ssh, php }, logError('ssh login collector error'));
  const backupStorage = deps.backupStorage ?? new LocalBackupStorage(path.join(config.dataDir, 'backups'));
  // The parts in the order a restore puts them back: zones before the mail and sites on them.
  const backups = backupsModule(
    svc,
    backupStorage,
    [domains.backupPart, mail.backupPart, sites.backupPart, databases.backupPart, cron.backupPart, ssh.backupPart],
    logError('backup scheduler error'),
  );
  const servers = await serversModule(
    svc,
    {
      oldestPending: [sites.oldestPending, mail.oldestPending, databases.oldestPending, cron.oldestPending, ssh.oldestPending],
      addressesChanged: [...domains.serverHooks.addressesChanged, forwardsFollowTarget(jobs)],
    },
    {
      authority: issuers.agentAuthority,
      sources: [databaseAgentUnits, sites.agentUnits, mail.agentUnits, cron.agentUnits, ssh.agentUnits],
    },
    logError('server status error'),
  );
  const accounts = accountsModule(
    svc,
    [
      domainAccountHooks(jobs),
      mailAccountHooks(jobs),
      siteAccountHooks(jobs, db, php),
      databaseAccountHooks(jobs),
      backups.accountHooks,
      cron.accountHooks,
      ssh.accountHooks,
      { diskBytes: recordedElsewhere },
    ],
    logError('usage meter error'),
  );
  const modules: Contribution[] = [
    resellersModule(svc),
    // The plan's hooks lock their units table by table in the accounts' hooks' order (sites, databases,
    // SSH): a plan's change and one of its accounts' suspensions would otherwise hold each other's rows.
    plansModule(svc, { changed: [sitePlanHooks(jobs), databasePlanHooks(jobs), ssh.planHooks].flatMap((h) => h.changed) }),
    servers.contribution,
    accounts.contribution,
    tokensModule(svc),
    operationsModule(svc, [...accounts.cancelHandlers, ...sites.cancelHandlers]),
    eventsModule(svc),
    domains.contribution,
    issuers.contribution,
    mail.contribution,
    databases.contribution,
    cron.contribution,
    ssh.contribution,
    sites.contribution,
    backups.contribution,
    movesModule(
      svc,
      {
        accounts: accounts.moves,
        parts: [mail.backupPart, sites.backupPart, databases.backupPart],
        // The web role's share in this order: cron jobs and SSH access before the user they run as.
        shares: [cron.share, ssh.share, sites.share, mail.share, databases.share],
        records: domains.serverRecords,
        servers: servers.service,
        backups: backups.copies,
      },
      logError('drain error'),
    ),
    webhooksModule(svc, { lookup: deps.webhookLookup, publish: publishEvent, onError: logError('webhook relay error') }),
    {
      loops: [applyResync(jobs, config.resyncMs, logError('apply resync error'))],
      housekeeping: [(now) => pruneIdempotencyKeys(db, now), () => pruneRateBuckets(db)],
      gauges: [
        {
          name: 'berth_job_queue_depth',
          help: 'Jobs waiting or running per queue.',
          labelNames: ['queue'],
          read: () => jobs.depth(),
        },
      ],
    },
  ];
  const all = <K extends keyof Contribution>(key: K) => modules.flatMap((m) => m[key] ?? []) as NonNullable<Contribution[K]>;

  for (const schema of [ProblemSchema, ...all('schemas')]) app.addSchema(schema);
  installValidation(app);
  installInputGuard(app);
  installErrorHandling(app, config.baseUrl);
  installRequestId(app);
  installCors(app);
  installNegotiation(app);
  metrics.install(app);
  for (const g of all('gauges')) metrics.addGauge(g);
  const perMinute = (name: string, quota: number) => ({ name, quota, windowSeconds: 60 });
  installAuth(app, {
    resolver,
    buckets:
      config.rateLimit.store === 'database' ? new DatabaseBucketStore(db) : new MemoryBucketStore(() => clock.now().getTime()),
    policies: {
      read: perMinute('read', config.rateLimit.readPerMinute),
      write: perMinute('write', config.rateLimit.writePerMinute),
      authFailures: perMinute('auth_failures', config.rateLimit.authFailuresPerMinute),
    },
    concurrent: config.rateLimit.concurrent,
  });
  installIdempotency(app, db, clock);
  // Zone files: the import route reads them as text (with its own body limit, 5 MiB).
  app.addContentTypeParser('text/dns', { parseAs: 'string', bodyLimit: 5 * 1024 * 1024 }, (_req, body, done) => done(null, body));
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));
  await installOpenApi(app, {
    webhooks: webhookDocs(),
    serverUrl: config.baseUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`,
    local: config.baseUrl === null,
  });
  installVersioning(app, deps.deprecations ?? DEPRECATIONS);
  metaRoutes(app, db, metrics);
  panelRoutes(app);
  for (const m of modules) m.routes?.(app);
  deps.extraRoutes?.(app);

  for (const w of [...all('workers'), housekeepingWorker(clock, all('housekeeping'))])
    await jobs.work(w.queue, w.run, { concurrency: w.concurrency });
  await jobs.start();
  await jobs.schedule(JOBS.housekeeping, HOUSEKEEPING_CRON);
  const loops = all('loops');
  if (config.jobs) for (const loop of loops) loop.start();
  // The agent listener listens beside the API, on its own address (listenAgents), and closes with it.
  const { listener } = servers;
  app.decorate('agentListener', listener);
  app.addHook('onClose', async () => {
    await listener?.close();
    for (const loop of loops) await loop.stop();
    await jobs.stop();
  });
  return app;
}
