import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';

/** PHP sites through HTTP with the embedded drivers: runtimes, settings, rendered pools and server blocks. */
let t: TestApp;
let plan: { id: string };
let n = 0;
const poolFile = (version: string, username: string) =>
  path.join(t.dataDir, 'rendered', 'php', version, `berth-${username}.conf`);
const serverBlock = (id: string) => readFileSync(path.join(t.dataDir, 'rendered', 'web', 'sites', `${id}.conf`), 'utf8');
const site = async (id: string) => (await t.get(`/v1/sites/${id}`)).body;
const inSync = (id: string) => eventually(async () => ((await site(id)).sync_state === 'in_sync' ? site(id) : null));

async function phpSite(body: Record<string, unknown> = {}, planId = plan.id) {
  const account = await createAccount(t, planId);
  const name = `php${n++}-${Date.now().toString(36)}.com`;
  await t.post('/v1/domains', { account_id: account.id, name });
  const r = await t.post('/v1/sites', { account_id: account.id, hostname: name, runtime: 'php-8.2', ...body });
  return { account, name, r };
}

beforeAll(async () => {
  t = await createTestApp({ env: { BERTH_PHP_VERSIONS: '8.2,8.3' } });
  plan = await createPlan(t, undefined, { features: ['php'], php_workers: 3 });
});
afterAll(async () => t.close());

describe('PHP sites', () => {
  it('GET /v1/runtimes lists static and the installed PHP versions, newest first', async () => {
    const r = await t.get('/v1/runtimes');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      data: [
        { name: 'static', kind: 'static', version: null },
        { name: 'php-8.3', kind: 'php', version: '8.3' },
        { name: 'php-8.2', kind: 'php', version: '8.2' },
      ],
      default_php: 'php-8.3',
    });
  });

  it('a PHP site gets its account’s pool (plan workers, confined) and a server block passing *.php to it', async () => {
    const { account, r } = await phpSite({ php: { memory_limit_mb: 256 } });
    expect(r.status, r.text).toBe(202);
    expect(r.body).toMatchObject({
      runtime: 'php-8.2',
      php: { memory_limit_mb: 256, upload_max_filesize_mb: 64, max_execution_time_s: 30, display_errors: false },
    });
    await eventually(async () => (await site(r.body.id)).status === 'active');
    await inSync(r.body.id);
    const pool = readFileSync(poolFile('8.2', account.username), 'utf8');
    expect(pool).toContain(`[berth-${account.username}]`);
    expect(pool).toContain('pm = ondemand');
    expect(pool).toContain('pm.max_children = 3');
    expect(pool).toContain(`php_admin_value[open_basedir] = ${path.join(t.dataDir, 'accounts', account.id)}/:`);
    const block = serverBlock(r.body.id);
    expect(block).toContain(`berth-${account.username}-8.2.sock;`);
    expect(block).toContain('try_files $uri $uri/ /index.php?$query_string;');
    expect(block).toContain('memory_limit=256M');
  });

  it('switching the version adds the new pool and removes the old; deleting the last PHP site removes its pool', async () => {
    const { account, r } = await phpSite();
    await inSync(r.body.id);
    const switched = await t.request('PATCH', `/v1/sites/${r.body.id}`, {
      body: { runtime: 'php-8.3', php: { display_errors: true } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(switched.status, switched.text).toBe(200);
    expect(switched.body.php).toMatchObject({ display_errors: true, memory_limit_mb: 128 });
    await inSync(r.body.id);
    expect(existsSync(poolFile('8.3', account.username))).toBe(true);
    expect(existsSync(poolFile('8.2', account.username))).toBe(false);
    expect(serverBlock(r.body.id)).toContain('-8.3.sock;');

    // Back to static: the block serves files and the pool goes.
    await t.request('PATCH', `/v1/sites/${r.body.id}`, { body: { runtime: 'static' } });
    await inSync(r.body.id);
    expect(serverBlock(r.body.id)).not.toContain('fastcgi_pass');
    expect(existsSync(poolFile('8.3', account.username))).toBe(false);

    const other = await phpSite();
    await inSync(other.r.body.id);
    expect((await t.request('DELETE', `/v1/sites/${other.r.body.id}`)).status).toBe(202);
    await eventually(async () => (await t.get(`/v1/sites/${other.r.body.id}`)).status === 404);
    expect(existsSync(poolFile('8.2', other.account.username))).toBe(false);
  });

  it('the pool follows the account’s workers: another plan, the plan changed, an override', async () => {
    const { account, r } = await phpSite();
    await inSync(r.body.id);
    const workers = () => /pm\.max_children = (\d+)/.exec(readFileSync(poolFile('8.2', account.username), 'utf8'))?.[1];
    expect(workers()).toBe('3');
    const patch = (url: string, body: unknown) =>
      t.request('PATCH', url, { body, headers: { 'content-type': 'application/merge-patch+json' } });

    const larger = await createPlan(t, undefined, { features: ['php'], php_workers: 7 });
    expect((await patch(`/v1/accounts/${account.id}`, { plan_id: larger.id })).status).toBe(200);
    await eventually(async () => workers() === '7', 10_000);
    expect((await patch(`/v1/plans/${larger.id}`, { php_workers: 9 })).status).toBe(200);
    await eventually(async () => workers() === '9', 10_000);
    expect((await patch(`/v1/accounts/${account.id}`, { limit_overrides: { php_workers: 2 } })).status).toBe(200);
    await eventually(async () => workers() === '2', 10_000);
    expect((await patch(`/v1/plans/${larger.id}`, { php_workers: 11 })).status).toBe(200);
    await inSync(r.body.id);
    expect(workers(), 'the override outranks the plan').toBe('2');
  });

  it('refuses a version that is not installed (naming the installed ones), settings out of range, and PHP without the plan’s php', async () => {
    const missing = await phpSite({ runtime: 'php-7.4' });
    expect(missing.r.status).toBe(422);
    expect(missing.r.body.errors[0]).toMatchObject({ pointer: '/runtime', code: 'unknown_runtime' });
    expect(missing.r.body.errors[0].detail).toContain('static, php-8.3, php-8.2');
    expect((await phpSite({ runtime: 'python-3.12' })).r.status).toBe(422);
    for (const php of [
      { memory_limit_mb: 8 },
      { upload_max_filesize_mb: 2048 },
      { max_execution_time_s: 0 },
      { opcache: true },
    ]) {
      const r = (await phpSite({ php })).r;
      expect(r.status, JSON.stringify(php)).toBe(422);
    }
    const staticPlan = await createPlan(t);
    const noPhp = await phpSite({}, staticPlan.id);
    expect(noPhp.r.status).toBe(403);
    expect(noPhp.r.body).toMatchObject({ code: 'feature_unavailable', feature: 'php' });
    const sites = (await t.get(`/v1/sites?account_id=${noPhp.account.id}`)).body.data;
    expect(sites).toEqual([]);
  });

  it('an archive whose PHP files try to leave the release is refused, and nothing changes', async () => {
    const { r } = await phpSite();
    await inSync(r.body.id);
    const evil = await t.request('POST', `/v1/sites/${r.body.id}/deployments`, {
      raw: tarGz([{ path: '../../../escape.php', content: '<?php echo 1;' }]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(evil.status).toBe(422);
    expect((await site(r.body.id)).current_deployment_id).toBeNull();
  });
});
