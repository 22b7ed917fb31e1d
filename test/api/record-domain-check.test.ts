import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/client.js';
import { isForeignKeyViolation } from '../../src/db/errors.js';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/db.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';

// Migration 0020: a record's domain is checked per statement (a trigger) instead of per row (a
// foreign key). The same guarantees, checked here: no record without its domain, ever.
describe("a DNS record's domain", () => {
  let t: TestApp;
  let accountId: string;
  let n = 0;
  const newDomain = async (): Promise<string> => {
    const r = await t.post('/v1/domains', { account_id: accountId, name: `check${++n}.example.com` });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  const insert = (q: Queryable, rows: [id: string, domainId: string][]) =>
    q.query(
      `INSERT INTO dns_records (id, domain_id, name, type, ttl, content)
       SELECT r.id, r.domain_id, 'www.' || r.id || '.example.com', 'A', 300, '192.0.2.1'
       FROM unnest($1::text[], $2::text[]) AS r(id, domain_id)`,
      [rows.map((r) => r[0]), rows.map((r) => r[1])],
    );
  const recordsOf = async (domainId: string) =>
    Number(
      (await t.db.query<{ n: string }>('SELECT count(*) AS n FROM dns_records WHERE domain_id = $1', [domainId])).rows[0]?.n,
    );
  const fkViolation = (err: unknown) => isForeignKeyViolation(err, 'dns_records_domain_id_fkey');

  beforeAll(async () => {
    t = await createTestApp({ jobs: false });
    accountId = (await createAccountOnNewPlan(t)).id;
  });
  afterAll(() => t.close());

  it('must exist: a statement with one record of no domain writes none of its records', async () => {
    const domainId = await newDomain();
    const before = await recordsOf(domainId);
    await expect(
      insert(t.db, [
        ['rec_fk_a', domainId],
        ['rec_fk_b', 'dom_missing'],
      ]),
    ).rejects.toSatisfy(fkViolation);
    expect(await recordsOf(domainId)).toBe(before);
    await insert(t.db, [['rec_fk_c', domainId]]);
    expect(await recordsOf(domainId)).toBe(before + 1);
  });

  it('cannot be changed to one that does not exist', async () => {
    const domainId = await newDomain();
    await insert(t.db, [['rec_fk_move', domainId]]);
    // Updates that leave the domain alone, and a move to a domain that exists, pass as with the key.
    await t.db.query(`UPDATE dns_records SET ttl = 600 WHERE id = 'rec_fk_move'`);
    const other = await newDomain();
    await t.db.query(`UPDATE dns_records SET domain_id = $1 WHERE id = 'rec_fk_move'`, [other]);
    await t.db.query(`UPDATE dns_records SET domain_id = $1 WHERE id = 'rec_fk_move'`, [domainId]);
    await expect(t.db.query(`UPDATE dns_records SET domain_id = 'dom_missing' WHERE id = 'rec_fk_move'`)).rejects.toSatisfy(
      fkViolation,
    );
    expect(await recordsOf(domainId)).toBeGreaterThan(0);
  });

  it('takes its records with it when deleted, and when its account is', async () => {
    const one = await newDomain();
    const two = await newDomain();
    await insert(t.db, [
      ['rec_fk_one', one],
      ['rec_fk_two', two],
    ]);
    await t.db.query('DELETE FROM domains WHERE id = $1', [one]);
    expect(await recordsOf(one)).toBe(0);
    expect(await recordsOf(two)).toBeGreaterThan(0);
    const other = (await createAccountOnNewPlan(t)).id;
    const r = await t.post('/v1/domains', { account_id: other, name: 'gone-with-account.example.com' });
    await t.db.query('DELETE FROM accounts WHERE id = $1', [other]);
    expect(await recordsOf(r.body.id)).toBe(0);
  });

  // Two sessions at once: PostgreSQL only (PGlite is one session).
  const waitingOnALock = async () =>
    eventually(
      async () =>
        Number(
          (
            await t.db.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          ).rows[0]?.n,
        ),
      20_000, // a lock wait shows within milliseconds; none in 20 s means there is none
    );

  /** A promise to hold a transaction open until `open()`. */
  const gate = () => {
    let open = () => undefined as void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  };

  it.skipIf(!onPostgres())('deleted while records are being added to it: the delete waits, then takes them too', async () => {
    const domainId = await newDomain();
    const [inserted, commit] = [gate(), gate()];
    const adding = t.db.transaction(async (tx) => {
      await insert(tx, [['rec_fk_race1', domainId]]);
      inserted.open();
      await commit.opened;
    });
    await inserted.opened;
    const deleting = t.db.query('DELETE FROM domains WHERE id = $1', [domainId]);
    await waitingOnALock().finally(commit.open); // never a transaction left open by a failure
    await adding;
    await deleting;
    expect(await recordsOf(domainId)).toBe(0);
  });

  it.skipIf(!onPostgres())('added while their domain is being deleted: refused once the delete commits', async () => {
    const domainId = await newDomain();
    const [deleted, commit] = [gate(), gate()];
    const deleting = t.db.transaction(async (tx) => {
      await tx.query('DELETE FROM domains WHERE id = $1', [domainId]);
      deleted.open();
      await commit.opened;
    });
    await deleted.opened;
    const adding = insert(t.db, [['rec_fk_race2', domainId]]);
    adding.catch(() => undefined); // awaited below
    await waitingOnALock().finally(commit.open);
    await deleting;
    await expect(adding).rejects.toSatisfy(fkViolation);
    expect(await recordsOf(domainId)).toBe(0);
  });
});
