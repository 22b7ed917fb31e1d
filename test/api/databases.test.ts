import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { nativePasswordHash } from '../../src/provisioning/render/mariadb.js';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, createToken, world } from '../helpers/fixtures.js';

/** Databases, users and grants through HTTP, with the embedded driver's rendered statements. */
let t: TestApp;
let w: Awaited<ReturnType<typeof world>>;
let prefix: string;
const PASSWORD = 'a long enough passphrase';
const renderedFile = (username: string) => path.join(t.dataDir, 'rendered', 'db', `${username}.sql`);
const rendered = (username = w.accountA.username) =>
  existsSync(renderedFile(username)) ? readFileSync(renderedFile(username), 'utf8') : '';
const inSync = (url: string) => eventually(async () => ((await t.get(url)).body.sync_state === 'in_sync' ? true : null));
const eventTypes = async (id: string) =>
  (await t.get(`/v1/events?resource_id=${id}`)).body.data.map((e: { type: string }) => e.type).sort();
const done = (id: string) =>
  eventually(async () => {
    const op = (await t.get(`/v1/operations/${id}`)).body;
    return ['succeeded', 'failed'].includes(op.status) ? op : null;
  });
let n = 0;
const database = async (accountId = w.accountA.id, username = w.accountA.username) => {
  const r = await t.post('/v1/databases', { account_id: accountId, name: `${username}_db${n++}` });
  if (r.status !== 201) throw new Error(r.text);
  return r.body;
};
const user = async (accountId = w.accountA.id, username = w.accountA.username) => {
  const r = await t.post('/v1/database-users', { account_id: accountId, username: `${username}_u${n++}`, password: PASSWORD });
  if (r.status !== 201) throw new Error(r.text);
  return r.body;
};

beforeAll(async () => {
  t = await createTestApp();
  w = await world(t);
  prefix = `${w.accountA.username}_`;
  await t.request('PATCH', `/v1/accounts/${w.accountA.id}`, {
    body: { limit_overrides: { max_databases: 100, max_database_users: 100 } },
  });
});
afterAll(async () => t.close());

describe('databases', () => {
  it('creates a database with the account prefix, utf8mb4 by default, rendered and announced', async () => {
    const r = await t.post('/v1/databases', { account_id: w.accountA.id, name: `${prefix}shop` });
    expect(r.status, r.text).toBe(201);
    expect(r.headers.location).toBe(`/v1/databases/${r.body.id}`);
    expect(r.body).toMatchObject({
      account_id: w.accountA.id,
      name: `${prefix}shop`,
      engine: 'mariadb',
      charset: 'utf8mb4',
      collation: 'utf8mb4_unicode_ci',
      size_bytes: 0,
      status: 'active',
      sync_state: 'pending',
    });
    await inSync(`/v1/databases/${r.body.id}`);
    expect(rendered()).toContain(
      `CREATE DATABASE IF NOT EXISTS \`${prefix}shop\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;`,
    );
    expect(statSync(renderedFile(w.accountA.username)).mode & 0o777).toBe(0o600);
    expect(await eventTypes(r.body.id)).toEqual(['database.created']);
    expect((await t.post('/v1/databases', { account_id: w.accountA.id, name: `${prefix}shop` })).body.code).toBe(
      'already_exists',
    );
  });

  it('refuses names without the prefix, with other characters or too long, and unknown charsets: 422, nothing made', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ name: 'other_shop' }, '/name', 'invalid_prefix'],
      [{ name: 'shop' }, '/name', 'invalid_prefix'],
      [{ name: `${prefix}a\`; DROP DATABASE x` }, '/name', 'invalid_name'],
      [{ name: `${prefix}Shop` }, '/name', 'invalid_name'],
      [{ name: `${prefix}${'a'.repeat(33)}` }, '/name', 'invalid_name'],
      [{ name: `${prefix}ok`, charset: 'utf8mb4', collation: 'latin1_bin' }, '/collation', 'unknown_collation'],
    ];
    for (const [body, pointer, code] of cases) {
      const r = await t.post('/v1/databases', { account_id: w.accountA.id, ...body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.errors[0], JSON.stringify(body)).toMatchObject({ pointer, code });
    }
    expect((await t.post('/v1/databases', { account_id: w.accountA.id, name: `${prefix}ok`, charset: 'koi8r' })).status).toBe(
      422,
    );
    const list = (await t.get(`/v1/databases?account_id=${w.accountA.id}&q=ok`)).body.data;
    expect(list).toEqual([]);
    expect(rendered()).not.toContain('DROP DATABASE x');
  });

  it('a name as long as MariaDB allows (64) is taken; one more is refused', async () => {
    const long = await createAccount(t, w.plan.id, undefined, { username: `l${Date.now().toString(36)}`.padEnd(32, 'x') });
    const fits = `${long.username}_${'d'.repeat(31)}`;
    expect(fits).toHaveLength(64);
    expect((await t.post('/v1/databases', { account_id: long.id, name: fits })).status).toBe(201);
    const r = await t.post('/v1/databases', { account_id: long.id, name: `${fits}e` });
    expect(r.body.errors[0]).toMatchObject({ pointer: '/name', code: 'too_long' });
  });

  it('changes charset and collation (a new charset takes its default collation); the name cannot change', async () => {
    const d = await database();
    const r = await t.request('PATCH', `/v1/databases/${d.id}`, {
      body: { charset: 'latin1' },
      headers: { 'content-type': 'application/merge-patch+json', 'if-match': '"1"' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ charset: 'latin1', collation: 'latin1_swedish_ci', version: 2 });
    expect((await t.request('PATCH', `/v1/databases/${d.id}`, { body: { name: `${prefix}renamed` } })).status).toBe(422);
    await inSync(`/v1/databases/${d.id}`);
    expect(rendered()).toContain(`ALTER DATABASE \`${d.name}\` CHARACTER SET latin1 COLLATE latin1_swedish_ci;`);
    const replaced = await t.request('PUT', `/v1/databases/${d.id}`, {
      body: { charset: 'utf8mb4', collation: 'utf8mb4_bin' },
      headers: { 'if-match': '"2"' },
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({ name: d.name, charset: 'utf8mb4', collation: 'utf8mb4_bin', version: 3 });
    expect((await t.request('PUT', `/v1/databases/${d.id}`, { body: { charset: 'utf8mb4' } })).status).toBe(422);
  });

  it("lists an account's databases, filtered by name; another tenant sees none of them", async () => {
    const d = await database();
    const mine = await t.get(`/v1/databases?account_id=${w.accountA.id}&q=${encodeURIComponent(d.name)}`);
    expect(mine.status).toBe(200);
    expect(mine.body.data).toEqual([expect.objectContaining({ id: d.id, name: d.name, charset: 'utf8mb4' })]);
    expect((await t.get('/v1/databases', w.tokenB)).body.data.map((x: { id: string }) => x.id)).not.toContain(d.id);
  });

  it('deletes a database: gone from the statements, 404 after, announced', async () => {
    const d = await database();
    await inSync(`/v1/databases/${d.id}`);
    expect((await t.request('DELETE', `/v1/databases/${d.id}`)).status).toBe(204);
    expect((await t.get(`/v1/databases/${d.id}`)).status).toBe(404);
    await eventually(async () => !rendered().includes(`\`${d.name}\``));
    expect(await eventTypes(d.id)).toEqual(['database.created', 'database.deleted']);
  });

  it('max_databases holds (403 quota_exceeded) and usage counts databases and users', async () => {
    const plan = await createPlan(t, undefined, { max_databases: 1, max_database_users: 1 });
    const account = await createAccount(t, plan.id);
    expect((await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_one` })).status).toBe(201);
    const r = await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_two` });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'quota_exceeded' });
    expect(r.text).toContain('max_databases');
    await t.post('/v1/database-users', { account_id: account.id, username: `${account.username}_one`, password: PASSWORD });
    const second = await t.post('/v1/database-users', {
      account_id: account.id,
      username: `${account.username}_two`,
      password: PASSWORD,
    });
    expect(second.status).toBe(403);
    expect(second.text).toContain('max_database_users');
    const usage = (await t.get(`/v1/accounts/${account.id}/usage`)).body;
    expect(usage.usage).toMatchObject({ databases: 1, database_users: 1 });
    expect(usage.limits).toMatchObject({ max_databases: 1, max_database_users: 1 });
  });

  it('a plan created without the database limits gets 10 of each; a replacement without them keeps them', async () => {
    const plan = await createPlan(t);
    expect(plan).toMatchObject({ max_databases: 10, max_database_users: 10, max_database_connections: 20 });
    const {
      id,
      reseller_id,
      created_at,
      updated_at,
      version,
      max_databases,
      max_database_users,
      max_database_connections,
      ...rest
    } = plan;
    void [id, reseller_id, created_at, updated_at, version, max_databases, max_database_users, max_database_connections];
    const patched = await t.request('PATCH', `/v1/plans/${plan.id}`, {
      body: { max_databases: 3, max_database_connections: 30 },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    const replaced = await t.request('PUT', `/v1/plans/${plan.id}`, { body: rest });
    expect(patched.body.max_databases).toBe(3);
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({ max_databases: 3, max_database_users: 10, max_database_connections: 30 });
  });
});

describe('database users', () => {
  it('creates a user with a generated password shown once; only its native hash is kept and rendered', async () => {
    const r = await t.post('/v1/database-users', {
      account_id: w.accountA.id,
      username: `${prefix}app`,
      generate_password: true,
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ username: `${prefix}app`, status: 'active', grants: [] });
    expect(r.body.password).toMatch(/^\S{24}$/);
    const got = await t.get(`/v1/database-users/${r.body.id}`);
    expect(got.body.password).toBeUndefined();
    const stored = await t.db.query<{ password_hash: string }>('SELECT password_hash FROM database_users WHERE id = $1', [
      r.body.id,
    ]);
    expect(stored.rows[0]?.password_hash).toBe(nativePasswordHash(r.body.password));
    await inSync(`/v1/database-users/${r.body.id}`);
    const script = rendered();
    expect(script).toContain(
      `CREATE USER IF NOT EXISTS '${prefix}app'@'%' IDENTIFIED BY PASSWORD '${nativePasswordHash(r.body.password)}';`,
    );
    expect(script).not.toContain(r.body.password);
    expect(await eventTypes(r.body.id)).toEqual(['database_user.created']);
    const events = (await t.get(`/v1/events?resource_id=${r.body.id}`)).text;
    expect(events).not.toContain(r.body.password);
    expect(events).not.toContain(nativePasswordHash(r.body.password));
  });

  it('refuses short passwords, both password kinds at once, none at all and a foreign prefix', async () => {
    const base = { account_id: w.accountA.id, username: `${prefix}weak` };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ password: 'short' }, '/password', 'too_short'],
      [{ password: PASSWORD, generate_password: true }, '/generate_password', 'conflicting'],
      [{}, '/password', 'required'],
      [{ password: `x${prefix}weak-and-long` }, '/password', 'contains_username'],
      [{ username: 'someone_else', password: PASSWORD }, '/username', 'invalid_prefix'],
    ];
    for (const [body, pointer, code] of cases) {
      const r = await t.post('/v1/database-users', { ...base, ...body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.errors[0]).toMatchObject({ pointer, code });
    }
    expect((await t.get(`/v1/database-users?q=weak`)).body.data).toEqual([]);
  });

  it('a new password replaces the hash; suspension locks the user in the statements', async () => {
    const u = await user();
    const changed = await t.request('PATCH', `/v1/database-users/${u.id}`, {
      body: { password: 'another long passphrase', status: 'suspended' },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ status: 'suspended', version: 2 });
    await inSync(`/v1/database-users/${u.id}`);
    expect(rendered()).toContain(
      `ALTER USER '${u.username}'@'%' IDENTIFIED BY PASSWORD '${nativePasswordHash('another long passphrase')}' WITH MAX_USER_CONNECTIONS 20 ACCOUNT LOCK;`,
    );
  });

  it('each user’s connections are the account’s max_database_connections: its plan’s, then its override, then another plan’s', async () => {
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id);
    const u = await user(account.id, account.username);
    const limitOf = (username: string, account: string) =>
      new RegExp(`ALTER USER '${username}'@'%' .* WITH MAX_USER_CONNECTIONS (\\d+) `).exec(rendered(account))?.[1];
    const limit = () => limitOf(u.username, account.username);
    await inSync(`/v1/database-users/${u.id}`);
    expect(limit()).toBe('20');
    const patch = (url: string, body: unknown) =>
      t.request('PATCH', url, { body, headers: { 'content-type': 'application/merge-patch+json' } });
    expect((await patch(`/v1/accounts/${account.id}`, { limit_overrides: { max_database_connections: 4 } })).status).toBe(200);
    await eventually(async () => limit() === '4');
    // The plan's change renders its other accounts again, not the one whose override outranks it.
    const generation = async () =>
      (await t.db.query<{ g: number }>('SELECT generation AS g FROM database_units WHERE account_id = $1', [account.id])).rows[0]
        ?.g;
    const before = await generation();
    const neighbour = await createAccount(t, plan.id);
    const v = await user(neighbour.id, neighbour.username);
    expect((await patch(`/v1/plans/${plan.id}`, { max_database_connections: 25 })).status).toBe(200);
    await eventually(async () => limitOf(v.username, neighbour.username) === '25');
    expect(await generation()).toBe(before);
    expect(limit()).toBe('4');
    const other = await createPlan(t, undefined, { max_database_connections: 7 });
    expect(
      (await patch(`/v1/accounts/${account.id}`, { plan_id: other.id, limit_overrides: { max_database_connections: null } }))
        .status,
    ).toBe(200);
    await eventually(async () => limit() === '7');
    const refused = await patch(`/v1/plans/${other.id}`, { max_database_connections: 0 });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ pointer: '/max_database_connections' });
  });

  it("PUT replaces the status (a password only when given); the list shows the account's users", async () => {
    const u = await user();
    const replaced = await t.request('PUT', `/v1/database-users/${u.id}`, { body: { status: 'suspended' } });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({ id: u.id, status: 'suspended', version: 2 });
    expect(replaced.body.password).toBeUndefined();
    expect((await t.request('PUT', `/v1/database-users/${u.id}`, { body: {} })).status).toBe(422);
    const listed = await t.get(`/v1/database-users?account_id=${w.accountA.id}&limit=200`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toContainEqual(expect.objectContaining({ id: u.id, status: 'suspended' }));
    expect((await t.get('/v1/database-users', w.tokenB)).body.data.map((x: { id: string }) => x.id)).not.toContain(u.id);
  });
});

describe('grants', () => {
  it('a grant has an ETag like every resource: If-None-Match gives 304, a stale If-Match 412 and nothing changes', async () => {
    const d = await database();
    const u = await user();
    const url = `/v1/databases/${d.id}/users/${u.id}`;
    // A grant that does not exist yet matches no ETag.
    expect((await t.request('PUT', url, { body: { privileges: ['SELECT'] }, headers: { 'if-match': '"1"' } })).status).toBe(412);
    const created = await t.request('PUT', url, { body: { privileges: ['SELECT'] } });
    expect(created.headers.etag).toBe('"1"');
    const read = await t.get(url);
    expect(read.headers.etag).toBe('"1"');
    expect((await t.request('GET', url, { headers: { 'if-none-match': '"1"' } })).status).toBe(304);
    const changed = await t.request('PUT', url, { body: { privileges: ['INSERT'] }, headers: { 'if-match': '"1"' } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.version).toBe(2);
    const stale = await t.request('PUT', url, { body: { privileges: ['DELETE'] }, headers: { 'if-match': '"1"' } });
    expect(stale.status).toBe(412);
    expect((await t.request('DELETE', url, { headers: { 'if-match': '"1"' } })).status).toBe(412);
    expect((await t.get(url)).body.privileges).toEqual(['INSERT']);
    expect((await t.request('DELETE', url, { headers: { 'if-match': '"2"' } })).status).toBe(204);
  });

  it('sets exactly the given privileges (201, then 200), lists them, renders an escaped grant, revokes', async () => {
    const d = await database();
    const u = await user();
    const url = `/v1/databases/${d.id}/users/${u.id}`;
    const first = await t.request('PUT', url, { body: { privileges: ['INSERT', 'SELECT'] } });
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({
      id: u.id,
      username: u.username,
      database_id: d.id,
      database: d.name,
      privileges: ['SELECT', 'INSERT'],
    });
    const second = await t.request('PUT', url, { body: { privileges: ['SELECT', 'CREATE_TEMPORARY_TABLES'] } });
    expect(second.status).toBe(200);
    expect((await t.get(url)).body.privileges).toEqual(['SELECT', 'CREATE_TEMPORARY_TABLES']);
    expect((await t.get(`/v1/databases/${d.id}/users`)).body.data.map((g: { id: string }) => g.id)).toEqual([u.id]);
    const withGrants = (await t.get(`/v1/database-users/${u.id}`)).body;
    expect(withGrants.grants).toEqual([
      { database_id: d.id, database: d.name, privileges: ['SELECT', 'CREATE_TEMPORARY_TABLES'] },
    ]);
    await inSync(`/v1/database-users/${u.id}`);
    // `_` in a grant's database name is a wildcard unless escaped.
    const escaped = d.name.replace(/_/g, '\\_');
    expect(rendered()).toContain(`GRANT SELECT, CREATE TEMPORARY TABLES ON \`${escaped}\`.* TO '${u.username}'@'%';`);
    expect(await eventTypes(u.id)).toEqual(['database_user.created', 'database_user.updated', 'database_user.updated']);

    expect((await t.request('DELETE', url)).status).toBe(204);
    expect((await t.request('DELETE', url)).status).toBe(404);
    expect((await t.get(url)).status).toBe(404);
    await eventually(async () => !rendered().includes(`ON \`${escaped}\`.* TO '${u.username}'`));
  });

  it('refuses unknown privileges and ALL with others: 422', async () => {
    const d = await database();
    const u = await user();
    const url = `/v1/databases/${d.id}/users/${u.id}`;
    expect((await t.request('PUT', url, { body: { privileges: ['SUPER'] } })).status).toBe(422);
    expect((await t.request('PUT', url, { body: { privileges: [] } })).status).toBe(422);
    const r = await t.request('PUT', url, { body: { privileges: ['ALL', 'SELECT'] } });
    expect(r.status).toBe(422);
    expect(r.body.errors[0]).toMatchObject({ pointer: '/privileges', code: 'conflicting' });
    expect((await t.get(`/v1/databases/${d.id}/users`)).body.data).toEqual([]);
  });

  it('a user and a database of different accounts are a 404, as is anything outside the token’s reach', async () => {
    const mine = await database();
    const theirs = await user(w.accountB.id, w.accountB.username);
    const r = await t.request('PUT', `/v1/databases/${mine.id}/users/${theirs.id}`, { body: { privileges: ['ALL'] } });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
    // Reseller B and account A's own token of the other side see nothing.
    expect((await t.get(`/v1/databases/${mine.id}`, w.tokenB)).status).toBe(404);
    expect((await t.get(`/v1/database-users/${theirs.id}`, w.tokenAccountA)).status).toBe(404);
    expect((await t.get(`/v1/databases?account_id=${w.accountA.id}`, w.tokenB)).body.data).toEqual([]);
    const noDatabases = await createToken(t, { principal: { kind: 'reseller', id: w.resellerA.id }, scopes: ['emails:write'] });
    expect((await t.get('/v1/databases', noDatabases)).status).toBe(403);
    const reader = await createToken(t, { principal: { kind: 'reseller', id: w.resellerA.id }, scopes: ['databases:read'] });
    expect((await t.get(`/v1/databases/${mine.id}`, reader)).status).toBe(200);
    expect((await t.post('/v1/databases', { account_id: w.accountA.id, name: `${prefix}ro` }, reader)).status).toBe(403);
  });
});

describe('with the account', () => {
  it('suspension locks every user of the account; termination withdraws the statements', async () => {
    const account = await createAccount(t, w.plan.id);
    const d = (await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_x` })).body;
    const u = (
      await t.post('/v1/database-users', { account_id: account.id, username: `${account.username}_x`, password: PASSWORD })
    ).body;
    await inSync(`/v1/database-users/${u.id}`);
    expect(rendered(account.username)).toContain('ACCOUNT UNLOCK;');
    expect((await t.post(`/v1/accounts/${account.id}/suspend`, { reason: 'unpaid' })).status).toBe(200);
    await eventually(async () => rendered(account.username).includes('ACCOUNT LOCK;'));
    expect((await t.get(`/v1/databases/${d.id}`)).body.status).toBe('suspended');
    expect((await t.get(`/v1/database-users/${u.id}`)).body.status).toBe('active');
    const terminated = await t.request('DELETE', `/v1/accounts/${account.id}`);
    expect((await done(terminated.body.operation.id)).status).toBe('succeeded');
    await eventually(async () => !existsSync(renderedFile(account.username)));
  });

  it('a backup holds the databases and users; a restore brings back what was deleted', async () => {
    const account = await createAccount(t, w.plan.id);
    const d = (await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_keep` })).body;
    const u = (
      await t.post('/v1/database-users', { account_id: account.id, username: `${account.username}_keep`, password: PASSWORD })
    ).body;
    await t.request('PUT', `/v1/databases/${d.id}/users/${u.id}`, { body: { privileges: ['SELECT'] } });
    const backup = (await t.post('/v1/backups', { account_id: account.id, include: ['databases'] })).body;
    expect((await done(backup.operation.id)).status).toBe('succeeded');
    expect((await t.get(`/v1/backups/${backup.id}`)).body.contents).toMatchObject({ databases: 1, database_users: 1 });
    await t.request('DELETE', `/v1/databases/${d.id}`);
    await t.request('DELETE', `/v1/database-users/${u.id}`);
    const restore = await t.post(`/v1/backups/${backup.id}/restore`, {});
    const op = await done(restore.body.operation.id);
    expect(op.status, JSON.stringify(op.error)).toBe('succeeded');
    expect((await t.get(`/v1/databases/${d.id}`)).body).toMatchObject({ name: d.name, sync_state: 'in_sync' });
    const back = (await t.get(`/v1/database-users/${u.id}`)).body;
    expect(back.grants).toEqual([{ database_id: d.id, database: d.name, privileges: ['SELECT'] }]);
    expect(rendered(account.username)).toContain(`IDENTIFIED BY PASSWORD '${nativePasswordHash(PASSWORD)}'`);
  });

  it('a restore refuses a database or a user another account holds now, and puts back nothing', async () => {
    const account = await createAccount(t, w.plan.id);
    const other = await createAccount(t, w.plan.id);
    const d = (await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_taken` })).body;
    const u = (
      await t.post('/v1/database-users', { account_id: account.id, username: `${account.username}_taken`, password: PASSWORD })
    ).body;
    const backup = (await t.post('/v1/backups', { account_id: account.id, include: ['databases'] })).body;
    expect((await done(backup.operation.id)).status).toBe('succeeded');
    // Names carry their account's prefix, so the API never gives one to another account: what a
    // restore must still not take over is made here directly.
    const holdsNow = async (table: 'databases' | 'database_users', row: { id: string }) => {
      await t.request('DELETE', `/v1/${table === 'databases' ? 'databases' : 'database-users'}/${row.id}`);
      const moved = { ...row, id: newId(table === 'databases' ? 'db' : 'dbu') };
      if (table === 'databases')
        await t.db.query(
          `INSERT INTO databases (id, account_id, name, charset, collation_name) VALUES ($1, $2, $3, 'utf8mb4', 'utf8mb4_unicode_ci')`,
          [moved.id, other.id, d.name],
        );
      else
        await t.db.query('INSERT INTO database_users (id, account_id, username, password_hash) VALUES ($1, $2, $3, $4)', [
          moved.id,
          other.id,
          u.username,
          nativePasswordHash(PASSWORD),
        ]);
      return moved.id;
    };
    for (const [table, row] of [
      ['databases', d],
      ['database_users', u],
    ] as const) {
      const held = await holdsNow(table, row);
      const restore = await t.post(`/v1/backups/${backup.id}/restore`, {});
      const op = await done(restore.body.operation.id);
      expect(op.status).toBe('failed');
      expect(op.error.code).toBe('already_exists');
      const owners = await t.db.query<{ account_id: string }>(`SELECT account_id FROM ${table} WHERE id IN ($1, $2)`, [
        row.id,
        held,
      ]);
      expect(owners.rows.map((r) => r.account_id)).toEqual([other.id]);
      await t.db.query(`DELETE FROM ${table} WHERE id = $1`, [held]);
    }
  });
});

describe('a database server that refuses', () => {
  it('leaves the unit in sync_state error with the reason, retried until it applies', async () => {
    let refusing = true;
    const applied: string[] = [];
    const broken = await createTestApp({
      env: { BERTH_RESYNC_MS: '200' },
      deps: {
        databaseDriver: {
          name: 'broken',
          applyAccount: async (spec) => {
            if (refusing) throw new Error('connect ECONNREFUSED 127.0.0.1:3306');
            applied.push(spec.prefix);
            return new Map(spec.databases.map((d) => [d.name, 4096]));
          },
          removeAccount: async () => undefined,
          measure: async () => new Map(),
          dump: async () => undefined,
          load: async () => undefined,
          checksums: async () => ({ version: 'broken', tables: {} }),
        },
      },
    });
    try {
      const account = await createAccount(broken, (await createPlan(broken)).id);
      const d = (await broken.post('/v1/databases', { account_id: account.id, name: `${account.username}_x` })).body;
      const erred = await eventually(async () => {
        const r = (await broken.get(`/v1/databases/${d.id}`)).body;
        return r.sync_state === 'error' ? r : null;
      });
      expect(erred.sync_error).toBe('connect ECONNREFUSED 127.0.0.1:3306');
      expect((await broken.get('/metrics')).text).toContain('berth_sync_errors{unit="database"} 1');
      refusing = false;
      const fixed = await eventually(async () => {
        const r = (await broken.get(`/v1/databases/${d.id}`)).body;
        return r.sync_state === 'in_sync' ? r : null;
      }, 90_000);
      expect(fixed).toMatchObject({ sync_error: null, size_bytes: 4096 });
      expect(applied).toContain(`${account.username}_`);
      expect((await broken.get(`/v1/accounts/${account.id}/usage`)).body.usage.disk_bytes).toBeGreaterThanOrEqual(4096);
    } finally {
      await broken.close();
    }
  }, 120_000);
});
