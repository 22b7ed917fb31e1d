/**
 * Benchmark servers, in their own process: Berth on one port and, on another, a bare Fastify
 * route that serves the same 50 account rows through the same database driver (the baseline).
 * Prints one JSON line with the ports and the token, then serves until killed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Fastify from 'fastify';
import { buildApp } from '../src/app.js';
import { systemCaller } from '../src/auth/caller.js';
import { generateTokenSecret } from '../src/auth/secret.js';
import { loadConfig } from '../src/config.js';
import { openDb } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { newId } from '../src/lib/ids.js';
import { listAccounts } from '../src/modules/accounts/repo.js';
import { insertRecords, zoneRecords } from '../src/modules/domains/records/repo.js';
import { listDomains } from '../src/modules/domains/repo.js';
import { toDomain } from '../src/modules/domains/representation.js';
import { mintOperatorToken } from '../src/modules/tokens/service.js';

const ACCOUNTS = 1000;

const databaseUrl = process.env.BENCH_DATABASE_URL || null;
const dataDir = process.env.BENCH_DATA_DIR || '/tmp/berth-bench';
// PGlite keeps its data on disk under the data directory, as `npm start` does.
const db = await openDb({ databaseUrl, dataDir, poolSize: 32 });
await migrate(db);
const TOKEN = generateTokenSecret();
await db.transaction((tx) => mintOperatorToken(tx, TOKEN, 'bench'));

const planId = newId('pln');
await db.query(
  `INSERT INTO plans (id, name, max_sites, max_domains, max_email_accounts, max_email_quota_mb, disk_quota_mb, max_backups, max_dns_records_per_domain)
   VALUES ($1, 'bench', 10, 2000, 10, 1024, 10240, 5, 20000)`,
  [planId],
);
const ids = Array.from({ length: ACCOUNTS }, () => newId('acc'));
await db.query(
  `INSERT INTO accounts (id, username, display_name, contact_email, plan_id)
   SELECT id, 'user' || n, 'User ' || n, 'user' || n || '@example.com', $2 FROM unnest($1::text[]) WITH ORDINALITY AS t(id, n)`,
  [ids, planId],
);

// 1,000 domains for the list benchmark, each with the zone a new domain gets (SOA + 2 NS).
const domainIds = Array.from({ length: ACCOUNTS }, () => newId('dom'));
await db.query(
  `INSERT INTO domains (id, account_id, name, unicode_name, serial)
   SELECT d, a, 'bench' || n || '.com', 'bench' || n || '.com', 2026112100 FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(d, a, n)`,
  [domainIds, ids],
);
await db.query(
  `INSERT INTO dns_records (id, domain_id, name, type, ttl, content, managed)
   SELECT 'rec_' || substr(md5(d || k), 1, 26), d, '@', CASE k WHEN 'soa' THEN 'SOA' ELSE 'NS' END, 3600,
     CASE k WHEN 'soa' THEN 'ns1.bench.example. hostmaster.bench.example. 2026112100 3600 900 1209600 300' ELSE k || '.bench.example.' END, true
   FROM unnest($1::text[]) AS d, unnest(ARRAY['soa', 'ns1', 'ns2']) AS k`,
  [domainIds],
);

// An active site for the deployment benchmark (jobs are off: it is inserted as provisioned).
const siteId = newId('site');
await db.query(
  `INSERT INTO domains (id, account_id, name, unicode_name, serial) VALUES ($1, $2, 'deploy-bench.com', 'deploy-bench.com', 2026112100)`,
  [newId('dom'), ids[0]],
);
await db.query(`INSERT INTO sites (id, account_id, hostname, status) VALUES ($1, $2, 'deploy-bench.com', 'active')`, [
  siteId,
  ids[0],
]);
// Its live release, empty: the backup benchmark fills it with files.
const releaseId = newId('dpl');
await db.query(`INSERT INTO deployments (id, site_id, status, format) VALUES ($1, $2, 'live', 'tar.gz')`, [releaseId, siteId]);
await db.query('UPDATE sites SET current_deployment_id = $2 WHERE id = $1', [siteId, releaseId]);
// The feed's first event: the backup benchmark follows the feed from its newest.
await db.query(
  `INSERT INTO events (id, type, account_id, resource_type, resource_id, resource_version, data) VALUES ($1, 'site.created', $2, 'site', $3, 1, '{}')`,
  [newId('evt'), ids[0], siteId],
);
const config = loadConfig({
  BERTH_LOG_LEVEL: 'silent',
  // Jobs run only where a benchmark needs them (backups); the list and deploy figures exclude them.
  BERTH_JOBS: process.env.BENCH_JOBS || 'false',
  BERTH_DATA_DIR: dataDir,
  // The benchmark measures the route, not the limiter refusing a single busy token.
  BERTH_RATE_LIMIT_READ: '100000000',
  BERTH_RATE_LIMIT_CONCURRENT: '1000',
  BERTH_RATE_LIMIT_WRITE: '100000000',
});
const app = await buildApp({ config, db, logger: false });
await app.listen({ host: '127.0.0.1', port: 0 });

// The baselines: bare routes with no auth, validation, hooks or representation.
// /accounts runs Berth's own list query (the same rows, the same driver): the goal's baseline.
// /accounts-plain reads the accounts table alone, a lower bound that also prices the plan join.
const operator = systemCaller('bench');
const baseline = Fastify();
baseline.get('/accounts', async () => ({
  data: (await listAccounts(db, operator, {}, { limit: 50, afterId: null })).slice(0, 50),
}));
baseline.get('/domains', async () => ({
  data: (await listDomains(db, operator, {}, { limit: 50, afterId: null })).slice(0, 50),
}));
// /domains-represented writes the page Berth writes (its representation of each row; Berth's adds
// only the pagination's `next_cursor`) with none of the stack: Berth against it is the stack's cost
// alone, the representation's (its mapping, the larger body's serialization and socket write) being
// the difference to /domains.
baseline.get('/domains-represented', async () => ({
  data: (await listDomains(db, operator, {}, { limit: 50, afterId: null }))
    .slice(0, 50)
    .map((r) => toDomain(r, config.nameservers)),
}));
baseline.get('/accounts-plain', async () => ({
  data: (await db.query('SELECT * FROM accounts ORDER BY id DESC LIMIT 50')).rows,
}));
// The DNS figures' references: what storing and reading the sync's records costs on this machine
// and engine, through Berth's own statements, with none of the stack, validation, diff, serial or
// zone file. The sync's apply and the export are absolute-time goals; these make them comparable
// across machines.
baseline.put<{ Params: { id: string } }>('/records-bare/:id', { bodyLimit: 16 * 1024 * 1024 }, async (req) => {
  const { records } = req.body as { records: { name: string; type: string; content: string }[] };
  await db.transaction((tx) =>
    insertRecords(
      tx,
      req.params.id,
      records.map((r) => ({ ...r, id: newId('rec'), ttl: 3600 })),
    ),
  );
  return { inserted: records.length };
});
baseline.get<{ Params: { id: string } }>('/zone-bare/:id', async (req, reply) => {
  const entries = await zoneRecords(db, req.params.id);
  reply.type('text/plain');
  return entries.map((e) => `${e.name}\t${e.ttl}\tIN\t${e.type}\t${e.content}\n`).join('');
});
// The server's own memory, for the deployment and backup benchmarks: the kernel's exact peak RSS
// (VmHWM), which writing 5 to clear_refs resets to the current RSS. A sampler polling the RSS every
// few ms would miss short peaks and cost the server's main thread about 3 % during a deployment.
const peakRss = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024;
baseline.get('/memory', async () => ({ rss: process.memoryUsage.rss(), peak: peakRss() }));
baseline.post('/memory/reset', async () => {
  writeFileSync('/proc/self/clear_refs', '5');
  return { rss: process.memoryUsage.rss() };
});
// The process's CPU time (µs), to price a request in the server alone.
baseline.get('/cpu', async () => {
  const u = process.cpuUsage();
  return { us: u.user + u.system };
});
// The event loop's delay since the last reset (sampled every 5 ms), for the lag under a backup.
const lag = monitorEventLoopDelay({ resolution: 5 });
lag.enable();
baseline.get('/lag', async () => ({ p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 }));
baseline.post('/lag/reset', async () => {
  lag.reset();
  return {};
});
await baseline.listen({ host: '127.0.0.1', port: 0 });

const port = (f: { server: { address(): unknown } }) => (f.server.address() as { port: number }).port;
process.stdout.write(
  JSON.stringify({
    berth: port(app),
    baseline: port(baseline),
    token: TOKEN,
    driver: db.kind,
    account: ids[0],
    dataDir,
    site: siteId,
    release: path.resolve(dataDir, 'accounts', ids[0] as string, 'sites', siteId, 'releases', releaseId),
  }) + '\n',
);
process.on('SIGINT', () => process.exit(0));
