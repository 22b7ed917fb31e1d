import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingDb, sequentialScans, type Statement } from '../../bench/scale/plans.js';
import { scaleProbes, scheduleScan } from '../../bench/scale/probes.js';
import { grow, type ScaleSize } from '../../bench/scale/seed.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { freshDb } from '../helpers/db.js';

/**
 * Every statement the scale benchmark (`npm run bench:scale`) makes the service run — the
 * requests' authentication, lists, usage counts, and the backup scheduler's scans — is planned
 * with an index. Small tables are planned as if sequential scans were dear, so the plan shows
 * what a million rows would get.
 */
describe('query plans of the scale benchmark', () => {
  const size: ScaleSize = { accounts: 20, domainsPerAccount: 5, eventsPerAccount: 20 };
  const seen: Statement[] = [];
  let t: TestApp;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const fresh = await freshDb();
    await grow(fresh.db, size);
    t = await createTestApp({ db: recordingDb(fresh.db, seen), jobs: false });
    close = async () => {
      await t.close();
      await fresh.db.close();
      await fresh.drop();
    };
  });
  afterAll(() => close?.());

  it('answers every probe with a full page or the resource', async () => {
    for (const probe of scaleProbes(size)) {
      const r = await t.get(probe.path);
      expect(r.status, probe.name).toBe(200);
      if (r.body.data) expect(r.body.data.length, probe.name).toBeGreaterThan(0);
    }
    await scheduleScan(t.db, size);
  });

  it('plans every statement those ran with an index', async () => {
    expect(seen.length).toBeGreaterThan(10);
    expect(await sequentialScans(t.db, seen)).toEqual([]);
  });

  it('finds a statement no index serves', async () => {
    const scans = await sequentialScans(t.db, [{ text: 'SELECT id FROM events WHERE data->>$1 = $2', params: ['name', 'x'] }]);
    expect(scans).toEqual([{ text: expect.any(String), tables: ['events'] }]);
  });
});
