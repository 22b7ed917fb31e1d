import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, createToken } from '../helpers/fixtures.js';
import { installed } from '../helpers/installed.js';
import { parentDnsServer, type ParentDsRecord } from '../helpers/parent-dns.js';

/**
 * DNSSEC on the embedded DNS driver (SPEC §19): the zone file signed with BIND's
 * `dnssec-signzone` from Berth's key, the state through `pending_ds` and `active`, and a
 * disabling that waits for the parent, played by test/helpers/parent-dns.ts.
 */
const signzone = installed('dnssec-signzone');

let t: TestApp;
let account: { id: string };
let parent: Awaited<ReturnType<typeof parentDnsServer>>;
/** The log lines of the hourly look at the parents. */
const parentLooks: { waiting: number; asked: number; unanswered: number }[] = [];
const logStream = {
  write: (line: string) => {
    const look = JSON.parse(line).dnssec_parent_look;
    if (look) parentLooks.push(look);
  },
};
beforeAll(async () => {
  parent = await parentDnsServer();
  t = await createTestApp({
    env: {
      BERTH_NAMESERVERS: 'ns1.host.example.net,ns2.host.example.net',
      BERTH_DNSSEC_RESOLVER: parent.address,
      BERTH_LOG_LEVEL: 'info',
    },
    deps: { logger: true, logStream },
  });
  account = await createAccount(t, (await createPlan(t, undefined, { max_domains: 10 })).id);
});
afterAll(async () => {
  await t.close();
  await parent.close();
});

const zoneFile = (name: string) => path.join(t.dataDir, 'rendered', 'dns', `${name}.zone`);
const dnssecOf = async (name: string) => (await t.get(`/v1/domains/${name}/dnssec`)).body;

/**
 * A new zone `name`, signed, its DS published at the parent with `ttl` (seconds) and seen there:
 * `active`. What asks the parent again, answering the state.
 */
async function activeZone(name: string, ttl?: number): Promise<() => Promise<string>> {
  const check = async () => (await t.post(`/v1/domains/${name}/dnssec/check`)).body.status as string;
  expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
  expect((await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: true } })).status).toBe(202);
  const signed = await eventually(async () => {
    const d = await dnssecOf(name);
    return d.status === 'pending_ds' && d;
  });
  parent.published.set(name, { ...(signed.ds_records[0] as ParentDsRecord), ...(ttl !== undefined && { ttl }) });
  expect(await check()).toBe('active');
  return check;
}

/** Runs the hourly housekeeping job now, and waits until it has ended. */
async function housekeeping(): Promise<void> {
  const { rows } = await t.db.query<{ id: string }>(
    `INSERT INTO pgboss.job (name, data) VALUES ('housekeeping', '{}') RETURNING id`,
  );
  await eventually(
    async () =>
      (await t.db.query<{ state: string }>('SELECT state FROM pgboss.job WHERE id = $1', [rows[0]!.id])).rows[0]?.state ===
      'completed',
    30_000,
  );
}

describe('DNSSEC', () => {
  it.skipIf(!signzone)(
    `signs the zone with Berth's key, waits for the DS at the parent, and unsigns only once the DS is gone (${signzone ? 'dnssec-signzone' : 'skipped: BIND’s dnssec-signzone is not installed'})`,
    async () => {
      const name = 'signed-zone.com';
      expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
      expect(await dnssecOf(name)).toMatchObject({ status: 'disabled', keys: [], ds_records: [], operation: null });

      const enabled = await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: true } });
      expect(enabled.status, enabled.text).toBe(202);
      expect(enabled.headers.location).toBe(`/v1/operations/${enabled.body.operation.id}`);
      expect(enabled.body).toMatchObject({ status: 'signing', algorithm: 13, denial: 'nsec3', publish_cds: true });
      const signed = await eventually(async () => {
        const d = await dnssecOf(name);
        return d.status === 'pending_ds' && d;
      });
      expect((await t.get(`/v1/operations/${enabled.body.operation.id}`)).body.status).toBe('succeeded');
      const [ds] = signed.ds_records;
      expect(signed.keys).toEqual([expect.objectContaining({ role: 'csk', flags: 257, algorithm: 13, key_tag: ds.key_tag })]);
      expect(ds.record).toBe(`${name}. IN DS ${ds.key_tag} 13 2 ${ds.digest}`);
      // Served signed: NSEC3 with no salt and no extra iterations, CDS for the parent; the DS
      // dnssec-dsfromkey computes from the served zone is the API's.
      const text = readFileSync(zoneFile(name), 'utf8');
      expect(text).toMatch(/NSEC3PARAM\s+1 0 0 -/);
      // (dnssec-signzone writes a long digest in pieces.)
      expect(text.replace(/[ \t]+/g, '')).toContain(`INCDS${ds.key_tag}132${ds.digest}`);
      expect(text).toMatch(/RRSIG\s+SOA 13 2 /);
      expect(execFileSync('dnssec-dsfromkey', ['-2', '-f', zoneFile(name), name], { encoding: 'utf8' }).trim()).toBe(ds.record);
      // The signer leaves nothing behind (dnssec-signzone writes a dsset file where it runs, unless told).
      expect(readdirSync(process.cwd()).filter((f) => f.startsWith('dsset-'))).toEqual([]);

      // No DS at the parent yet: still pending. Then the registrar publishes it.
      expect((await t.post(`/v1/domains/${name}/dnssec/check`)).body).toMatchObject({
        status: 'pending_ds',
        parent_ds_seen_at: null,
      });
      parent.published.set(name, ds);
      const active = await t.post(`/v1/domains/${name}/dnssec/check`);
      expect(active.status, active.text).toBe(200);
      expect(active.body.status).toBe('active');
      expect(active.body.parent_ds_seen_at).not.toBeNull();

      // A change is served signed; the algorithm of a signed zone stays.
      expect((await t.post(`/v1/domains/${name}/records`, { name: 'late', type: 'A', content: '192.0.2.9' })).status).toBe(201);
      await eventually(async () =>
        /^late\.signed-zone\.com\.\s+3600\s+IN\s+A\s+192\.0\.2\.9$/m.test(readFileSync(zoneFile(name), 'utf8')),
      );
      expect(readFileSync(zoneFile(name), 'utf8')).toMatch(/RRSIG\s+A 13 3 /);
      // A zone import (what another provider exported) is served signed, with the same key.
      const version = (await t.get(`/v1/domains/${name}`)).body.version;
      const imported = await t.request('PUT', `/v1/domains/${name}/zone`, {
        raw: 'imported 3600 IN A 192.0.2.10\nlate 3600 IN A 192.0.2.9\n',
        headers: { 'content-type': 'text/dns', 'if-match': `"${version}"` },
      });
      expect(imported.status, imported.text).toBe(200);
      await eventually(async () =>
        /^imported\.signed-zone\.com\.\s+3600\s+IN\s+A\s+192\.0\.2\.10$/m.test(readFileSync(zoneFile(name), 'utf8')),
      );
      expect(readFileSync(zoneFile(name), 'utf8')).toMatch(/^imported\.signed-zone\.com\.\s+3600\s+IN\s+RRSIG\s+A 13 3 /m);
      expect((await dnssecOf(name)).ds_records).toEqual(signed.ds_records);
      // Signed anew before the signatures (30 days) have 7 days left: the hourly housekeeping, queued now.
      // The import's apply records when it signed after writing the file: the clock moves once it has.
      await eventually(
        async () =>
          (await t.db.query(`SELECT 1 FROM pgboss.job WHERE name = 'dns.apply' AND state < 'completed'`)).rows.length === 0,
      );
      const before = readFileSync(zoneFile(name), 'utf8');
      t.clock.advance(23 * 86_400_000 + 60_000);
      await t.db.query(`INSERT INTO pgboss.job (name, data) VALUES ('housekeeping', '{}')`);
      await eventually(async () => readFileSync(zoneFile(name), 'utf8') !== before, 30_000);
      expect(readFileSync(zoneFile(name), 'utf8')).toMatch(/RRSIG\s+A 13 3 /);
      const other = await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: true, algorithm: 15 } });
      expect(other.status).toBe(409);
      expect(other.body.code).toBe('invalid_state');

      // Disabling while the parent publishes the DS: refused, unless forced, which asks the parent to
      // remove it (RFC 8078) and keeps the zone signed until it is gone.
      const refused = await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: false } });
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('ds_still_published');
      expect((await dnssecOf(name)).status).toBe('active');
      const forced = await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: false, force: true } });
      expect(forced.status, forced.text).toBe(202);
      expect(forced.body.status).toBe('pending_disable');
      await eventually(async () => /CDS\s+0 0 0 00/.test(readFileSync(zoneFile(name), 'utf8')));
      expect(readFileSync(zoneFile(name), 'utf8')).toMatch(/CDNSKEY\s+0 3 0 AA==/);
      expect((await t.post(`/v1/domains/${name}/dnssec/check`)).body.status).toBe('pending_disable');
      // Gone from the parent, the DS may still be in resolvers' caches for its TTL (3,600 s here);
      // seen again meanwhile (the registrar undid it), the wait starts over once it is gone.
      const check = async () => (await t.post(`/v1/domains/${name}/dnssec/check`)).body.status;
      parent.published.delete(name);
      expect(await check()).toBe('pending_disable');
      t.clock.advance(1_800_000);
      parent.published.set(name, ds);
      expect(await check()).toBe('pending_disable');
      parent.published.delete(name);
      t.clock.advance(1_800_000);
      expect(await check()).toBe('pending_disable');
      t.clock.advance(3_600_000);
      expect(await check()).toBe('disabled');
      await eventually(async () => !readFileSync(zoneFile(name), 'utf8').includes('RRSIG'));

      const events = (
        await t.get(`/v1/events?resource_id=${signed.keys[0] ? (await t.get(`/v1/domains/${name}`)).body.id : ''}`)
      ).body.data
        .map((e: { type: string }) => e.type)
        .filter((type: string) => type.startsWith('domain.dnssec.'));
      expect(events.sort()).toEqual(
        ['domain.dnssec.active', 'domain.dnssec.disabled', 'domain.dnssec.updated', 'domain.dnssec.updated'].sort(),
      );
    },
  );

  it.skipIf(!signzone)(
    'keeps a zone whose DS was just removed at the registrar signed for the TTL it was seen with, then unsigns it',
    async () => {
      const name = 'cached-ds.com';
      const check = await activeZone(name);
      // The registrar removes the DS, then the zone is disabled: resolvers may hold the DS for 3,600 s.
      parent.published.delete(name);
      const off = async () => t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: false } });
      const first = await off();
      expect(first.status, first.text).toBe(202);
      expect(first.body.status).toBe('pending_disable');
      // Asked again meanwhile, the wait does not start over.
      t.clock.advance(1_800_000);
      expect((await off()).body.status).toBe('pending_disable');
      t.clock.advance(1_799_000);
      expect(await check()).toBe('pending_disable');
      expect(readFileSync(zoneFile(name), 'utf8')).toContain('RRSIG');
      t.clock.advance(1_000);
      expect(await check()).toBe('disabled');
      await eventually(async () => !readFileSync(zoneFile(name), 'utf8').includes('RRSIG'));
    },
  );

  it.skipIf(!signzone)('waits a week at most, whatever TTL the DS was seen with', async () => {
    const name = 'long-ds.com';
    const check = await activeZone(name, 30 * 86_400);
    parent.published.delete(name);
    expect((await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: false } })).body.status).toBe(
      'pending_disable',
    );
    t.clock.advance(7 * 86_400_000 - 1_000);
    expect(await check()).toBe('pending_disable');
    t.clock.advance(1_000);
    expect(await check()).toBe('disabled');
  });

  it.skipIf(!signzone)(
    'asks the parent every hour by itself: a published DS activates the zone, and a zone being disabled is unsigned once its DS has been gone for its TTL',
    async () => {
      const name = 'hourly-look.com';
      expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
      expect((await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: true } })).status).toBe(202);
      const signed = await eventually(async () => {
        const d = await dnssecOf(name);
        return d.status === 'pending_ds' && d;
      });
      parentLooks.length = 0;
      await housekeeping();
      expect((await dnssecOf(name)).status).toBe('pending_ds');
      // The look says what it did, and every parent here answers.
      expect(parentLooks).toHaveLength(1);
      expect(parentLooks[0]).toMatchObject({ asked: parentLooks[0]?.waiting, unanswered: 0 });
      expect(parentLooks[0]?.waiting).toBeGreaterThanOrEqual(1);
      parent.published.set(name, signed.ds_records[0] as ParentDsRecord);
      await housekeeping();
      expect((await dnssecOf(name)).status).toBe('active');
      // (The job's pruning keeps events for a while only: each is looked for after its own run.)
      const id = (await t.get(`/v1/domains/${name}`)).body.id;
      const events = async (type: string) => (await t.get(`/v1/events?resource_id=${id}&type=${type}`)).body.data;
      expect(await events('domain.dnssec.active')).toHaveLength(1);

      const off = await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: false, force: true } });
      expect(off.body.status).toBe('pending_disable');
      parent.published.delete(name);
      await housekeeping();
      expect((await dnssecOf(name)).status).toBe('pending_disable');
      t.clock.advance(3_600_000);
      await housekeeping();
      expect((await dnssecOf(name)).status).toBe('disabled');
      await eventually(async () => !readFileSync(zoneFile(name), 'utf8').includes('RRSIG'));
      expect(await events('domain.dnssec.disabled')).toHaveLength(1);
    },
  );

  it.skipIf(!signzone)(
    "unsigns a zone being disabled whose parent now publishes another key's DS only, once its own has been gone for its TTL",
    async () => {
      const name = 'foreign-ds.com';
      const check = await activeZone(name);
      const ours = parent.published.get(name)!;
      expect((await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: false, force: true } })).body.status).toBe(
        'pending_disable',
      );
      parent.published.set(name, { ...ours, key_tag: (ours.key_tag + 1) % 65_536, digest: 'AB'.repeat(32) });
      expect(await check()).toBe('pending_disable');
      t.clock.advance(3_599_000);
      expect(await check()).toBe('pending_disable');
      t.clock.advance(1_000);
      expect(await check()).toBe('disabled');
    },
  );

  it.skipIf(!signzone)('waits a day for a DS whose TTL was never read (a zone active before Berth read it)', async () => {
    const name = 'unread-ttl.com';
    const check = await activeZone(name);
    const id = (await t.get(`/v1/domains/${name}`)).body.id;
    await t.db.query('UPDATE dnssec SET parent_ds_ttl = NULL WHERE domain_id = $1', [id]);
    parent.published.delete(name);
    expect((await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: false } })).body.status).toBe(
      'pending_disable',
    );
    t.clock.advance(86_400_000 - 1_000);
    expect(await check()).toBe('pending_disable');
    t.clock.advance(1_000);
    expect(await check()).toBe('disabled');
  });

  it.skipIf(!signzone)('comes back with its key when the zone is restored from a backup', async () => {
    const name = 'kept-key.com';
    expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
    expect((await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: true, denial: 'nsec' } })).status).toBe(202);
    const signed = await eventually(async () => {
      const d = await dnssecOf(name);
      return d.status === 'pending_ds' && d;
    });
    const backup = await t.post('/v1/backups', { account_id: account.id, include: ['dns'] });
    expect(backup.status, backup.text).toBe(202);
    await eventually(async () => (await t.get(`/v1/backups/${backup.body.id}`)).body.status === 'completed');
    // No DS at the parent: unsigned at once.
    expect((await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: false } })).body.status).toBe('disabled');
    await eventually(async () => !readFileSync(zoneFile(name), 'utf8').includes('RRSIG'));

    expect((await t.post(`/v1/backups/${backup.body.id}/restore`, {})).status).toBe(202);
    const restored = await eventually(async () => {
      const d = await dnssecOf(name);
      return d.status === 'pending_ds' && d;
    });
    expect(restored).toMatchObject({ denial: 'nsec', algorithm: 13, ds_records: signed.ds_records });
    await eventually(async () => readFileSync(zoneFile(name), 'utf8').includes('RRSIG'));
    expect(readFileSync(zoneFile(name), 'utf8')).not.toContain('NSEC3');
  });

  it.skipIf(!signzone)('says `error` when the zone cannot be signed, serves it as it was, and signs it once it can', async () => {
    const name = 'unsignable.com';
    const id = (await t.post('/v1/domains', { account_id: account.id, name })).body.id;
    await eventually(async () => existsSync(zoneFile(name)));
    // A key whose public half is not its private key's: dnssec-signzone refuses it. The zone's
    // apply waits for its lock, held here, so that it never signs with the key as it was made.
    const { put, public_key } = await t.db.withSessionLock(`dns.apply:${id}`, async () => {
      const put = await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: true } });
      const { public_key } = (
        await t.db.query<{ public_key: string }>('SELECT public_key FROM dnssec_keys WHERE domain_id = $1', [id])
      ).rows[0]!;
      await t.db.query('UPDATE dnssec_keys SET public_key = $2 WHERE domain_id = $1', [
        id,
        Buffer.alloc(64, 7).toString('base64'),
      ]);
      await t.db.query(`UPDATE domains SET generation = generation + 1 WHERE id = $1`, [id]);
      await t.db.query(`INSERT INTO pgboss.job (name, data) VALUES ('dns.apply', $1)`, [JSON.stringify({ domain_id: id, name })]);
      return { put, public_key };
    });
    const failed = await eventually(async () => {
      const d = await dnssecOf(name);
      return d.status === 'error' && d;
    });
    expect(failed.error).toMatchObject({ code: 'signing_failed', detail: expect.stringContaining('dnssec-signzone') });
    expect(readFileSync(zoneFile(name), 'utf8')).not.toContain('RRSIG');
    expect((await t.get(`/v1/operations/${put.body.operation.id}`)).body.status).not.toBe('running');
    const events = (await t.get(`/v1/events?resource_id=${id}&type=domain.dnssec.error`)).body.data;
    expect(events).toHaveLength(1);
    // Mended: the next try signs it.
    await t.db.query('UPDATE dnssec_keys SET public_key = $2 WHERE domain_id = $1', [id, public_key]);
    await eventually(async () => (await dnssecOf(name)).status === 'pending_ds', 30_000);
    expect(readFileSync(zoneFile(name), 'utf8')).toContain('RRSIG');
  });

  it('refuses what it cannot do, and changes nothing', async () => {
    const name = 'refused-zone.com';
    expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
    for (const body of [{ enabled: true, algorithm: 7 }, { enabled: true, denial: 'nsec5' }, { enabled: true, salt: 'ab' }, {}]) {
      const r = await t.request('PUT', `/v1/domains/${name}/dnssec`, { body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe('validation_failed');
    }
    // A zone whose NS records name other name servers (made under an older BERTH_NAMESERVERS) is not Berth's to sign.
    const id = (await t.get(`/v1/domains/${name}`)).body.id;
    await t.db.query(
      `UPDATE dns_records SET content = 'ns' || id || '.elsewhere.example.' WHERE domain_id = $1 AND type = 'NS'`,
      [id],
    );
    const elsewhere = await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: true } });
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body.code).toBe('not_authoritative');
    // Disabling what is not enabled: nothing to do, an operation ended at once.
    const off = await t.request('PUT', `/v1/domains/${name}/dnssec`, { body: { enabled: false } });
    expect(off.status).toBe(202);
    expect(off.body).toMatchObject({ status: 'disabled', operation: { status: 'succeeded' } });
    expect(existsSync(zoneFile(name)) && readFileSync(zoneFile(name), 'utf8').includes('RRSIG')).toBe(false);
    expect((await dnssecOf(name)).status).toBe('disabled');
  });

  it('is 404 for a domain the caller cannot see, and needs domains:write to change', async () => {
    const name = 'private-zone.com';
    expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
    const stranger = await createToken(t, {
      name: 'other',
      scopes: ['*'],
      principal: { kind: 'account', id: (await createAccount(t, (await createPlan(t)).id)).id },
    });
    const reader = await createToken(t, {
      name: 'reader',
      scopes: ['domains:read'],
      principal: { kind: 'account', id: account.id },
    });
    expect((await t.request('GET', `/v1/domains/${name}/dnssec`, { token: stranger })).status).toBe(404);
    expect((await t.request('PUT', `/v1/domains/${name}/dnssec`, { token: stranger, body: { enabled: true } })).status).toBe(404);
    expect((await t.request('GET', `/v1/domains/${name}/dnssec`, { token: reader })).status).toBe(200);
    expect((await t.request('PUT', `/v1/domains/${name}/dnssec`, { token: reader, body: { enabled: true } })).status).toBe(403);
    expect((await dnssecOf(name)).status).toBe('disabled');
  });
});
