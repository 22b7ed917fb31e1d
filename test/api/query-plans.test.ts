import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingDb, rowsRead, sequentialScans, type Statement } from '../../bench/scale/plans.js';
import { scaleProbes, scheduleScan } from '../../bench/scale/probes.js';
import { grow, SCALE_RESELLER, type ScaleSize } from '../../bench/scale/seed.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { freshDb } from '../helpers/db.js';
import { createToken } from '../helpers/fixtures.js';

/**
 * Every statement the scale benchmark (`npm run bench:scale`) makes the service run — the
 * requests' authentication, lists, usage counts, and the backup scheduler's scans — is planned
 * with an index. Small tables are planned as if sequential scans were dear, so the plan shows
 * what a million rows would get.
 */
describe('query plans of the scale benchmark', () => {
  // The reseller's 2 accounts are the oldest: 10 of 100 domains, 40 of 400 events.
  const size: ScaleSize = { accounts: 20, domainsPerAccount: 5, eventsPerAccount: 20, resellerAccounts: 2 };
  const seen: Statement[] = [];
  let t: TestApp;
  let resellerToken: string;
  let close: () => Promise<void>;
  const ask = (probe: ReturnType<typeof scaleProbes>[number]) => t.get(probe.path, probe.asReseller ? resellerToken : undefined);

  beforeAll(async () => {
    const fresh = await freshDb();
    await grow(fresh.db, size);
    t = await createTestApp({ db: recordingDb(fresh.db, (s) => seen.push(s)), jobs: false });
    resellerToken = await createToken(t, { principal: { kind: 'reseller', id: SCALE_RESELLER } });
    close = async () => {
      await t.close();
      await fresh.db.close();
      await fresh.drop();
    };
  });
  afterAll(() => close?.());

  it('answers every probe with a full page or the resource', async () => {
    for (const probe of scaleProbes(size)) {
      const r = await ask(probe);
      expect(r.status, probe.name).toBe(200);
      if (r.body.data) expect(r.body.data.length, probe.name).toBeGreaterThan(0);
    }
    await scheduleScan(t.db, size);
  });

  it('plans every statement those ran with an index', async () => {
    expect(seen.length).toBeGreaterThan(10);
    expect(await sequentialScans(t.db, seen)).toEqual([]);
  });

  it("reads a reseller's pages from indexes of its own, not the whole table newest first", async () => {
    for (const probe of scaleProbes(size).filter((p) => p.asReseller)) {
      seen.length = 0;
      // The listed table is the path's resource (`/v1/domains?…`: domains).
      const listed = probe.path.split(/[/?]/)[2];
      const r = await ask(probe);
      // Its seeded rows; the events also the token's own `token.created`.
      expect(r.body.data.length, probe.name).toBe(listed === 'domains' ? 10 : 41);
      const scans = await rowsRead(t.db, seen);
      // A page of 50 (and the one more that says whether another follows).
      expect(
        scans.filter((scan) => scan.rows > 51),
        probe.name,
      ).toEqual([]);
      // Its ids from an index alone (db/paging.ts, pageOfIds): a plan that reads the rows to
      // filter them can be priced, wrongly, below the reseller's index (seen at a million rows).
      expect(
        scans.filter((scan) => scan.table === listed).map((scan) => scan.node),
        probe.name,
      ).toContain('Index Only Scan');
    }
  });

  it('finds a statement no index serves', async () => {
    const scans = await sequentialScans(t.db, [{ text: 'SELECT id FROM events WHERE data->>$1 = $2', params: ['name', 'x'] }]);
    expect(scans).toEqual([{ text: expect.any(String), tables: ['events'] }]);
  });
});
