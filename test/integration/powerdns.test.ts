import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/app.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';
import { daemonApp, daemonEnv, dig, NO_DAEMONS } from './daemons.js';

describe.skipIf(!daemonEnv)(`PowerDNS driver (${daemonEnv ? 'BERTH_DRIVER_DNS=powerdns' : NO_DAEMONS})`, () => {
  let t: TestApp;
  let accountId: string;
  beforeAll(async () => {
    t = await daemonApp();
    accountId = (await createAccountOnNewPlan(t)).id;
  });
  afterAll(async () => t?.close());

  const zoneName = () => `pdns-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.com`;
  const serial = async (name: string) => Number((await dig(name, 'SOA'))[0]?.split(' ')[2]);
  const apiSerial = async (id: string) => (await t.get(`/v1/domains/${id}`)).body.dns.serial as number;

  it('serves a new zone, then every change with its new serial, and nothing once deleted', async () => {
    const name = zoneName();
    // Asked before it exists: PowerDNS caches the refusal, which the driver must flush. (Asked
    // before the domain is created: its zone is served within milliseconds of the 201.)
    expect(await dig(name, 'SOA')).toEqual([]);
    const created = await t.post('/v1/domains', { account_id: accountId, name });
    expect(created.status, created.text).toBe(201);
    const domain = created.body;
    await eventually(async () => (await serial(name)) === (await apiSerial(domain.id)));
    expect(await dig(name, 'NS')).toEqual(expect.arrayContaining(['ns1.berth.invalid.', 'ns2.berth.invalid.']));

    const rec = await t.post(`/v1/domains/${domain.id}/records`, { name: 'api', type: 'A', content: '192.0.2.44', ttl: 300 });
    expect(rec.status, rec.text).toBe(201);
    await eventually(async () => (await dig(`api.${name}`, 'A')).join() === '192.0.2.44');
    expect(await serial(name)).toBe(await apiSerial(domain.id));

    const txt = await t.post(`/v1/domains/${domain.id}/records`, { name: 'api', type: 'TXT', content: 'say "hi" — ok' });
    expect(txt.status, txt.text).toBe(201);
    await eventually(async () => (await dig(`api.${name}`, 'TXT')).length === 1);
    expect((await dig(`api.${name}`, 'TXT'))[0]).toBe('"say \\"hi\\" \\226\\128\\148 ok"');

    const changed = await t.request('PATCH', `/v1/domains/${domain.id}/records/${rec.body.id}`, {
      body: { content: '192.0.2.45' },
    });
    expect(changed.status, changed.text).toBe(200);
    await eventually(async () => (await dig(`api.${name}`, 'A')).join() === '192.0.2.45');
    expect(await serial(name)).toBe(await apiSerial(domain.id));

    expect((await t.request('DELETE', `/v1/domains/${domain.id}/records/${rec.body.id}`)).status).toBe(204);
    await eventually(async () => (await dig(`api.${name}`, 'A')).length === 0);
    expect(await serial(name)).toBe(await apiSerial(domain.id));

    expect((await t.request('DELETE', `/v1/domains/${domain.id}`)).status).toBeLessThan(300);
    await eventually(async () => (await dig(name, 'SOA')).length === 0);
  });

  it("takes over a zone PowerDNS already had, keeping Berth's serial (soa_edit_api emptied)", async () => {
    const name = zoneName();
    const res = await fetch(`${daemonEnv!.BERTH_PDNS_API_URL}/api/v1/servers/localhost/zones`, {
      method: 'POST',
      headers: { 'X-API-Key': daemonEnv!.BERTH_PDNS_API_KEY as string, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `${name}.`, kind: 'Native', nameservers: ['ns.elsewhere.example.'], soa_edit_api: 'DEFAULT' }),
    });
    expect(res.status).toBe(201);
    const created = await t.post('/v1/domains', { account_id: accountId, name });
    expect(created.status, created.text).toBe(201);
    const domain = created.body;
    await eventually(async () => (await serial(name)) === (await apiSerial(domain.id)));
    expect(await dig(name, 'NS')).not.toContain('ns.elsewhere.example.');
    await t.request('DELETE', `/v1/domains/${domain.id}`);
  });
});
