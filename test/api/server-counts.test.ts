import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grow, scaleId } from '../../bench/scale/seed.js';
import type { Db } from '../../src/db/client.js';
import { foldServerCounts } from '../../src/modules/servers/repo.js';
import { freshDb } from '../helpers/db.js';

/**
 * A server's accounts and unit counts are kept by triggers as accounts and units change
 * (migration 0044). After every kind of change — accounts and units added in bulk and one by one,
 * units applied and failed, an account placed elsewhere, a domain, a site and an account deleted
 * — they equal a count of the rows themselves.
 */
describe('server counts kept as accounts and units change', () => {
  let db: Db;
  let close: () => Promise<void>;
  const account = (n: number) => scaleId('acc', n);
  const server = (n: number) => scaleId('srv', n);

  beforeAll(async () => {
    const fresh = await freshDb();
    db = fresh.db;
    // Six accounts on servers 1–6 (the seed's turn: account n on server n + 1), three domains each.
    await grow(db, { accounts: 6, domainsPerAccount: 3, eventsPerAccount: 1, resellerAccounts: 0 });
    close = async () => {
      await db.close();
      await fresh.drop();
    };
  });
  afterAll(() => close?.());

  /** Per server: accounts, units in sync, pending, failed. */
  type Counts = Record<string, [number, number, number, number]>;
  type Row = { server_id: string; accounts: number; in_sync: number; pending: number; error: number };
  const byServer = (rows: Row[]): Counts =>
    Object.fromEntries(
      rows
        .filter((r) => r.accounts || r.in_sync || r.pending || r.error)
        .map((r) => [r.server_id, [r.accounts, r.in_sync, r.pending, r.error]]),
    );

  const kept = async () =>
    byServer(
      (
        await db.query(
          `SELECT server_id, sum(accounts)::int AS accounts, sum(in_sync)::int AS in_sync, sum(pending)::int AS pending,
             sum(error)::int AS error
           FROM server_counts GROUP BY server_id`,
        )
      ).rows as never,
    );

  const counted = async () =>
    byServer(
      (
        await db.query(
          `SELECT server_id, count(DISTINCT account_id) FILTER (WHERE sync_state IS NULL)::int AS accounts,
             count(*) FILTER (WHERE sync_state = 'in_sync')::int AS in_sync,
             count(*) FILTER (WHERE sync_state = 'pending')::int AS pending, count(*) FILTER (WHERE sync_state = 'error')::int AS error
           FROM (SELECT s.server_id, a.id AS account_id, NULL AS sync_state FROM accounts a
               CROSS JOIN LATERAL (VALUES (a.web_server_id), (a.mail_server_id), (a.database_server_id)) s (server_id)
             UNION ALL SELECT a.web_server_id AS server_id, a.id, u.sync_state FROM sites u JOIN accounts a ON a.id = u.account_id
             UNION ALL SELECT a.web_server_id, a.id, u.sync_state FROM cron_units u JOIN accounts a ON a.id = u.account_id
             UNION ALL SELECT a.web_server_id, a.id, u.sync_state FROM ssh_units u JOIN accounts a ON a.id = u.account_id
             UNION ALL SELECT a.database_server_id, a.id, u.sync_state FROM database_units u JOIN accounts a ON a.id = u.account_id
             UNION ALL SELECT a.mail_server_id, a.id, u.sync_state FROM mail_units u JOIN domains d ON d.id = u.domain_id
               JOIN accounts a ON a.id = d.account_id) units
           GROUP BY server_id`,
        )
      ).rows as never,
    );

  const expectKept = async () => {
    const now = await counted();
    expect(await kept()).toEqual(now);
    return now;
  };

  it('counts the seeded mail units, added in one statement', async () => {
    const counts = await expectKept();
    expect(counts[server(1)]).toEqual([1, 3, 0, 0]);
  });

  it('counts units added one by one, applied and failed', async () => {
    for (const n of [0, 1, 2]) {
      await db.query(`INSERT INTO sites (id, account_id, hostname) VALUES ($1, $2, $3)`, [
        scaleId('sit', n),
        account(n),
        `s${n}.test`,
      ]);
      await db.query('INSERT INTO cron_units (account_id) VALUES ($1)', [account(n)]);
      await db.query('INSERT INTO ssh_units (account_id) VALUES ($1)', [account(n)]);
      await db.query('INSERT INTO database_units (account_id) VALUES ($1)', [account(n)]);
    }
    expect((await expectKept())[server(1)]).toEqual([1, 3, 4, 0]);
    await db.query(`UPDATE sites SET sync_state = 'in_sync' WHERE account_id = $1`, [account(0)]);
    await db.query(`UPDATE cron_units SET sync_state = 'error'`);
    await db.query(`UPDATE mail_units SET sync_state = 'pending', generation = generation + 1`);
    // A change that leaves the state as it was adds nothing.
    const rows = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM server_counts')).rows[0]?.n;
    await db.query(`UPDATE ssh_units SET generation = generation + 1`);
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM server_counts')).rows[0]?.n).toBe(rows);
    expect((await expectKept())[server(1)]).toEqual([1, 1, 5, 1]);
  });

  it('moves an account’s units with each role it is placed on elsewhere', async () => {
    await db.query('UPDATE accounts SET web_server_id = $2 WHERE id = $1', [account(0), server(6)]);
    await db.query('UPDATE accounts SET mail_server_id = $2, database_server_id = $2 WHERE id = $1', [account(1), server(6)]);
    const counts = await expectKept();
    // Account 0 is on servers 1 (mail, database) and 6 (web): it counts once on each.
    expect(counts[server(1)]).toEqual([1, 0, 4, 0]);
    expect(counts[server(2)]).toEqual([1, 0, 2, 1]);
    expect(counts[server(6)]?.[0]).toBe(3);
  });

  it('takes out what a deletion removes, cascades included', async () => {
    await db.query('DELETE FROM domains WHERE id = $1', [scaleId('dom', 3)]);
    await db.query('DELETE FROM sites WHERE account_id = $1', [account(2)]);
    await expectKept();
    await db.query('DELETE FROM accounts WHERE id = ANY($1)', [[account(0), account(1), account(5)]]);
    const counts = await expectKept();
    expect(counts[server(1)]).toBeUndefined();
    expect(counts[server(6)]).toBeUndefined();
  });

  it('folds each server’s rows into one, the counts unchanged', async () => {
    const before = await expectKept();
    await foldServerCounts(db);
    expect(await kept()).toEqual(before);
    const rows = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM server_counts');
    expect(rows.rows[0]?.n).toBe(Object.keys(before).length);
  });
});
