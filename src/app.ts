import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import type { Db } from './db/client.js';
import { installAuth } from './http/auth.js';
import { installCors } from './http/cors.js';
import { installErrorHandling } from './http/errors.js';
import { installIdempotency, pruneIdempotencyKeys } from './http/idempotency.js';
import { installMetrics } from './http/metrics.js';
import { metaRoutes } from './http/meta-routes.js';
import { installNegotiation } from './http/negotiation.js';
import { installOpenApi } from './http/openapi.js';
import { DatabaseBucketStore, MemoryBucketStore } from './http/rate-limit.js';
import { genRequestId, installRequestId } from './http/request-id.js';
import type { App } from './http/routes.js';
import { ProblemSchema } from './http/schemas.js';
import { installValidation } from './http/validation.js';
import { DEPRECATIONS, installVersioning, type DeprecationRegistry } from './http/versioning.js';
import { JOBS } from './jobs/names.js';
import { PgBossQueue, type JobQueue } from './jobs/queue.js';
import { dnsReconciler } from './provisioning/dns-reconciler.js';
import type { DnsDriver, MailDriver, WebDriver } from './provisioning/driver.js';
import { mailReconciler } from './provisioning/mail-reconciler.js';
import { driversFor } from './provisioning/drivers/index.js';
import { applyResync } from './provisioning/resync.js';
import { webReconciler } from './provisioning/web-reconciler.js';
import { systemClock, type Clock } from './lib/time.js';
import { accountRoutes, accountSchemas } from './modules/accounts/routes.js';
import { accountsService, cancelTermination } from './modules/accounts/service.js';
import type { ServiceDeps } from './modules/deps.js';
import { pruneEvents } from './modules/events/repo.js';
import { dnsChangesService } from './modules/dns/changes.js';
import { dnsChangeRoutes, dnsSchemas } from './modules/dns/changes-routes.js';
import { dnsRoutes } from './modules/dns/routes.js';
import { dnsService } from './modules/dns/service.js';
import { domainRoutes, domainSchemas } from './modules/domains/routes.js';
import { domainCounter, domainsService } from './modules/domains/service.js';
import { emailRoutes, emailSchemas } from './modules/emails/routes.js';
import { emailCounter, emailsService } from './modules/emails/service.js';
import { deploymentsService } from './modules/sites/deployments.js';
import { siteJobs } from './modules/sites/jobs.js';
import { siteRoutes, siteSchemas } from './modules/sites/routes.js';
import { siteCancelHandlers, siteCounter, sitesService } from './modules/sites/service.js';
import { eventRoutes, eventSchemas } from './modules/events/routes.js';
import { eventsService } from './modules/events/service.js';
import { operationRoutes, operationSchemas } from './modules/operations/routes.js';
import { operationsService } from './modules/operations/service.js';
import { planRoutes, planSchemas } from './modules/plans/routes.js';
import { plansService } from './modules/plans/service.js';
import { resellerRoutes, resellerSchemas } from './modules/resellers/routes.js';
import { resellersService } from './modules/resellers/service.js';
import { TokenResolver } from './modules/tokens/resolver.js';
import { tokenRoutes, tokenSchemas } from './modules/tokens/routes.js';
import { tokensService } from './modules/tokens/service.js';
import { addressPolicy, type Lookup } from './modules/webhooks/address-policy.js';
import { deliveryCounts, pruneDeliveries } from './modules/webhooks/deliveries-repo.js';
import { webhookDeliverer } from './modules/webhooks/deliver.js';
import { deliveryRelay } from './modules/webhooks/relay.js';
import { webhookDocs, webhookRoutes, webhookSchemas } from './modules/webhooks/routes.js';
import { webhooksService } from './modules/webhooks/service.js';
import { loadServerKey, subkey } from './lib/server-key.js';
import { backupJobs } from './modules/backups/jobs.js';
import { restoreJobs } from './modules/backups/restore.js';
import { backupRoutes, backupSchemas } from './modules/backups/routes.js';
import { backupsService } from './modules/backups/service.js';
import { backupScheduler } from './modules/backups/scheduler.js';
import { backupScheduleRoutes, backupScheduleSchemas } from './modules/backups/schedule-routes.js';
import { schedulesService } from './modules/backups/schedules.js';
import { LocalBackupStorage, type BackupStorage } from './modules/backups/storage.js';
import { backupCounter, storageKeysOfAccount } from './modules/backups/repo.js';

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
  /** Backup storage; by default a directory under the data dir. */
  backupStorage?: BackupStorage;
  /** How webhook hosts resolve; by default the system resolver. */
  webhookLookup?: Lookup;
  /** Extra routes (tests register test-only routes here). */
  extraRoutes?: (app: App) => void;
  logger?: boolean;
}

const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Builds the Fastify app with every plugin and route; does not listen (tests inject). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, db } = deps;
  const clock = deps.clock ?? systemClock;
  const app = Fastify({
    logger: deps.logger === false ? false : { level: config.logLevel, redact: ['req.headers.authorization'] },
    genReqId: genRequestId,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    ajv: { customOptions: { removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  const jobs =
    deps.jobs ?? new PgBossQueue(db, { runWorkers: config.jobs, onError: (err) => app.log.error({ err }, 'job queue error') });
  const resolver = new TokenResolver({
    db,
    clock,
    ttlMs: config.tokenCacheTtlMs,
    bootstrapToken: config.bootstrapToken,
    onBackgroundError: (err) => app.log.warn({ err }, 'could not record token use'),
  });
  const svc: ServiceDeps = { db, clock, config, jobs, resolver };

  for (const schema of [
    ProblemSchema,
    ...resellerSchemas,
    ...planSchemas,
    ...operationSchemas,
    ...accountSchemas,
    ...tokenSchemas,
    ...eventSchemas,
    ...domainSchemas,
    ...dnsSchemas,
    ...emailSchemas,
    ...siteSchemas,
    ...webhookSchemas,
    ...backupSchemas,
    ...backupScheduleSchemas,
  ]) {
    app.addSchema(schema);
  }
  installValidation(app);
  installErrorHandling(app, config.baseUrl);
  installRequestId(app);
  installCors(app);
  installNegotiation(app);
  const metrics = installMetrics(app);
  metrics.addGauge('berth_job_queue_depth', 'Jobs waiting or running per queue.', () => jobs.depth());
  metrics.addGauge('berth_webhook_deliveries', 'Webhook deliveries kept, by status.', () => deliveryCounts(db));
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
  await installOpenApi(app, { webhooks: webhookDocs() });
  installVersioning(app, deps.deprecations ?? DEPRECATIONS);
  metaRoutes(app, db, metrics);

  const backupStorage = deps.backupStorage ?? new LocalBackupStorage(path.join(config.dataDir, 'backups'));
  const removeBackups = async (accountId: string) => {
    for (const key of await storageKeysOfAccount(db, accountId)) await backupStorage.remove(key);
  };
  const accounts = accountsService(svc, [domainCounter, emailCounter, siteCounter, backupCounter], [removeBackups]);
  resellerRoutes(app, resellersService(svc));
  planRoutes(app, plansService(svc));
  accountRoutes(app, accounts);
  tokenRoutes(app, tokensService(svc));
  operationRoutes(app, operationsService(svc, new Map([['account.terminate', cancelTermination], ...siteCancelHandlers(jobs)])));
  eventRoutes(app, eventsService(svc));
  const domains = domainsService(svc);
  domainRoutes(app, domains);
  const dns = dnsService(svc, domains);
  dnsRoutes(app, domains, dns);
  const dnsChanges = dnsChangesService(svc, domains, dns);
  dnsChangeRoutes(app, domains, dnsChanges);
  emailRoutes(app, emailsService(svc));
  const sites = sitesService(svc);
  const deployments = deploymentsService(svc, sites);
  siteRoutes(app, sites, deployments);
  backupRoutes(app, backupsService(svc, backupStorage));
  backupScheduleRoutes(app, schedulesService(svc));
  const scheduler = backupScheduler(svc, backupStorage, (err) => app.log.error({ err }, 'backup scheduler error'));
  const secretsKey = subkey(loadServerKey(config.secretKey, config.dataDir), 'webhook secrets');
  const policy = addressPolicy(config.webhooks.allowHosts, deps.webhookLookup);
  const relay = deliveryRelay({ db, jobs, clock, config, onError: (err) => app.log.error({ err }, 'webhook relay error') });
  webhookRoutes(app, webhooksService(svc, { secretsKey, policy, kick: relay.kick }));
  deps.extraRoutes?.(app);

  const configured = driversFor(config);
  const resync = applyResync(jobs, config.resyncMs, (err) => app.log.error({ err }, 'apply resync error'));
  await jobs.work(JOBS.dnsApply, dnsReconciler(db, deps.dnsDriver ?? configured.dns));
  await jobs.work(JOBS.mailApply, mailReconciler(db, deps.mailDriver ?? configured.mail, config.dataDir));
  const webDriver = deps.webDriver ?? configured.web;
  const siteWork = siteJobs(svc, webDriver);
  await jobs.work(JOBS.webApply, webReconciler(db, webDriver, config.dataDir));
  await jobs.work(JOBS.siteProvision, async (data) => siteWork.provision(String(data.operation_id)));
  await jobs.work(JOBS.siteDelete, async (data) => siteWork.remove(String(data.operation_id)));
  await jobs.work(JOBS.siteDeploy, async (data) => siteWork.deploy(String(data.operation_id)));
  await jobs.work(JOBS.dnsChangeApply, async (data) => dnsChanges.runScheduled(String(data.change_id)));
  const createBackup = backupJobs(svc, backupStorage);
  await jobs.work(JOBS.backupCreate, async (data) => createBackup(String(data.operation_id)));
  const restoreBackup = restoreJobs(svc, backupStorage, { domains, dns, sites, deployments });
  await jobs.work(JOBS.backupRestore, async (data) =>
    restoreBackup(String(data.operation_id), data.include as Parameters<typeof restoreBackup>[1]),
  );
  await jobs.work(JOBS.accountTerminate, async (data) => accounts.runTermination(String(data.operation_id)));
  const deliver = webhookDeliverer({ db, clock, config, secretsKey, policy, onFinished: relay.kick });
  await jobs.work(JOBS.webhookDeliver, async (data) => deliver(String(data.delivery_id), Number(data.claim)), {
    concurrency: config.webhooks.workers,
  });
  await jobs.work(JOBS.housekeeping, async () => {
    const now = clock.now();
    await pruneEvents(db, new Date(now.getTime() - EVENT_RETENTION_MS));
    await pruneDeliveries(db, new Date(now.getTime() - EVENT_RETENTION_MS));
    await pruneIdempotencyKeys(db, now);
    await db.query(`DELETE FROM rate_buckets WHERE updated_at < now() - interval '1 hour'`);
  });
  await jobs.start();
  await jobs.schedule(JOBS.housekeeping, '17 * * * *');
  if (config.jobs) {
    relay.start();
    scheduler.start();
    resync.start();
  }
  app.addHook('onClose', async () => {
    await relay.stop();
    await scheduler.stop();
    await resync.stop();
    await jobs.stop();
  });
  return app;
}
