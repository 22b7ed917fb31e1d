import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, createReseller, createToken } from '../helpers/fixtures.js';

// Migration 0021: an account's resources carry its reseller (the column a reseller's lists walk),
// set by the database on every insert, and an account's reseller never changes.
describe("an account's resources carry its reseller", () => {
  let t: TestApp;
  let reseller: { id: string };
  let other: { id: string };
  let account: { id: string; username: string };
  let token: string;
  let otherToken: string;
  const TABLES = ['domains', 'sites', 'mail_addresses', 'databases', 'database_users', 'backups', 'backup_schedules'];

  beforeAll(async () => {
    t = await createTestApp({ jobs: false });
    reseller = await createReseller(t);
    other = await createReseller(t);
    token = await createToken(t, { principal: { kind: 'reseller', id: reseller.id } });
    otherToken = await createToken(t, { principal: { kind: 'reseller', id: other.id } });
    const plan = await createPlan(t, undefined, { features: ['ssl', 'backups'] });
    account = await createAccount(t, plan.id, token);
  });
  afterAll(() => t.close());

  it('on every resource made through the API, and a reseller lists only its own', async () => {
    const made = [
      await t.post('/v1/domains', { account_id: account.id, name: 'carried.example.com', mail_enabled: true }, token),
      await t.post('/v1/sites', { account_id: account.id, hostname: 'www.carried.example.com' }, token),
      await t.post('/v1/emails', { address: 'info@carried.example.com', password: 'correct horse battery' }, token),
      await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_shop` }, token),
      await t.post(
        '/v1/database-users',
        { account_id: account.id, username: `${account.username}_app`, generate_password: true },
        token,
      ),
      await t.post('/v1/backup-schedules', { account_id: account.id, cron: '0 3 * * *', retain: 2 }, token),
      await t.post('/v1/backups', { account_id: account.id, include: ['dns'] }, token),
    ];
    for (const r of made) expect(r.status, r.text).toBeLessThan(300);
    for (const table of TABLES) {
      const rows = await t.db.query<{ reseller_id: string }>(`SELECT reseller_id FROM ${table} WHERE account_id = $1`, [
        account.id,
      ]);
      expect(
        rows.rows.map((r) => r.reseller_id),
        table,
      ).toEqual([reseller.id]);
    }
    for (const list of [
      '/v1/domains',
      '/v1/sites',
      '/v1/emails',
      '/v1/databases',
      '/v1/database-users',
      '/v1/backups',
      '/v1/backup-schedules',
    ]) {
      expect((await t.get(list, token)).body.data, list).toHaveLength(1);
      expect((await t.get(list, otherToken)).body.data, list).toHaveLength(0);
    }
  });

  it("whatever an insert gives: the account's reseller is written", async () => {
    await t.db.query(
      `INSERT INTO domains (id, account_id, name, unicode_name, serial, reseller_id)
       VALUES ('dom_0000000000000000000000carry', $1, 'given.example.com', 'given.example.com', 2026112601, $2)`,
      [account.id, other.id],
    );
    const row = await t.db.query<{ reseller_id: string }>(`SELECT reseller_id FROM domains WHERE name = 'given.example.com'`);
    expect(row.rows[0]?.reseller_id).toBe(reseller.id);
  });

  it("an account's reseller cannot change; its other fields can", async () => {
    await expect(t.db.query('UPDATE accounts SET reseller_id = $2 WHERE id = $1', [account.id, other.id])).rejects.toMatchObject({
      code: '23514',
    });
    await t.db.query('UPDATE accounts SET reseller_id = $2, display_name = $3 WHERE id = $1', [account.id, reseller.id, 'Kept']);
    const r = await t.get(`/v1/accounts/${account.id}`, token);
    expect(r.body).toMatchObject({ reseller_id: reseller.id, display_name: 'Kept' });
  });
});
