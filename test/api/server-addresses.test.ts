import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenAgents } from '../../src/app.js';
import { agentHarness } from '../helpers/agents.js';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';

/**
 * A server given new addresses: the records of the accounts it serves that point at its old
 * ones follow, a zone at a time, for the roles it serves them; nothing else changes.
 */
let t: TestApp;
let url: string;
const LOCAL = 'srv_00000000000000000000000000';
const { enrolledServer, removeDirs } = agentHarness(
  () => t,
  () => url,
);

beforeAll(async () => {
  t = await createTestApp({ env: { BERTH_AGENT_LISTEN: '127.0.0.1:0', BERTH_WEB_IPV4: '192.0.2.10' } });
  url = `https://127.0.0.1:${await listenAgents(t.app, t.config)}`;
});
afterAll(async () => {
  await t.close();
  removeDirs();
});

const patch = (url: string, body: unknown) =>
  t.request('PATCH', url, { body, headers: { 'content-type': 'application/merge-patch+json' } });
/** A zone's A and AAAA records as `name type content`, sorted. */
const addresses = async (domain: string) =>
  ((await t.get(`/v1/domains/${domain}/records`)).body.data as { name: string; type: string; content: string }[])
    .filter((r) => r.type === 'A' || r.type === 'AAAA')
    .map((r) => `${r.name} ${r.type} ${r.content}`)
    .sort();
const serial = async (domain: string) => (await t.get(`/v1/domains/${domain}`)).body.dns.serial as number;

async function domainOf(
  account: { id: string; username: string },
  records: { name: string; type: string; content: string }[] = [],
) {
  const name = `${account.username}.example.com`;
  const made = await t.post('/v1/domains', { account_id: account.id, name, mail_enabled: true });
  expect(made.status, made.text).toBe(201);
  for (const r of records) expect((await t.post(`/v1/domains/${name}/records`, { ttl: 300, ...r })).status).toBe(201);
  return name;
}

describe('a server’s new addresses', () => {
  it('repoint the records of the accounts it serves, by role; records pointing elsewhere and other servers’ accounts stay', async () => {
    const web = (await enrolledServer({ roles: ['web'], ipv4: '198.51.100.21', ipv6: '2001:db8::21' })).server;
    const mail = (await enrolledServer({ roles: ['mail'], ipv4: '198.51.100.23' })).server;
    const plan = await createPlan(t);
    const placement = { web: web.id, mail: mail.id, database: LOCAL };
    const [a, b] = [
      await createAccount(t, plan.id, undefined, { placement }),
      await createAccount(t, plan.id, undefined, { placement }),
    ];
    const local = await createAccount(t, plan.id);
    const extra = [
      { name: 'shop', type: 'A', content: '198.51.100.21' },
      { name: 'elsewhere', type: 'A', content: '203.0.113.99' },
    ];
    const [domainA, domainB, domainLocal] = [await domainOf(a, extra), await domainOf(b), await domainOf(local, extra)];
    expect(await addresses(domainA)).toEqual([
      '@ A 198.51.100.21',
      '@ AAAA 2001:db8::21',
      'elsewhere A 203.0.113.99',
      'mail A 198.51.100.23',
      'shop A 198.51.100.21',
      'www A 198.51.100.21',
      'www AAAA 2001:db8::21',
    ]);
    const untouched = { local: await addresses(domainLocal), serial: await serial(domainLocal) };

    const renumbered = await patch(`/v1/servers/${web.id}`, { ipv4: '198.51.100.31' });
    expect(renumbered.status, renumbered.text).toBe(200);
    expect(renumbered.body.ipv4).toBe('198.51.100.31');
    await eventually(async () => (await addresses(domainB)).includes('@ A 198.51.100.31'));
    await eventually(async () => (await addresses(domainA)).includes('shop A 198.51.100.31'));
    expect(await addresses(domainA)).toEqual([
      '@ A 198.51.100.31',
      '@ AAAA 2001:db8::21',
      'elsewhere A 203.0.113.99',
      'mail A 198.51.100.23',
      'shop A 198.51.100.31',
      'www A 198.51.100.31',
      'www AAAA 2001:db8::21',
    ]);
    expect(await addresses(domainB)).toEqual([
      '@ A 198.51.100.31',
      '@ AAAA 2001:db8::21',
      'mail A 198.51.100.23',
      'www A 198.51.100.31',
      'www AAAA 2001:db8::21',
    ]);

    // The mail server's: only the mail host's record is its.
    expect((await patch(`/v1/servers/${mail.id}`, { ipv4: '198.51.100.33', ipv6: '2001:db8::33' })).status).toBe(200);
    await eventually(async () => (await addresses(domainA)).includes('mail A 198.51.100.33'));
    expect(await addresses(domainB)).toContain('@ A 198.51.100.31');
    // A new domain of the account gets the addresses its servers have now.
    const later = await t.post('/v1/domains', { account_id: a.id, name: `${a.username}.example.net`, mail_enabled: true });
    expect(later.status).toBe(201);
    expect(await addresses(later.body.name)).toEqual([
      '@ A 198.51.100.31',
      '@ AAAA 2001:db8::21',
      'mail A 198.51.100.33',
      'mail AAAA 2001:db8::33',
      'www A 198.51.100.31',
      'www AAAA 2001:db8::21',
    ]);
    expect({ local: await addresses(domainLocal), serial: await serial(domainLocal) }).toEqual(untouched);
  });

  it('an address taken away with none of its family in its place: the records pointing at it go, the others stay; one given back, the template’s come again', async () => {
    const web = (await enrolledServer({ roles: ['web', 'mail'], ipv4: '198.51.100.41', ipv6: '2001:db8::41' })).server;
    const other = (await enrolledServer({ roles: ['web', 'mail'], ipv4: '198.51.100.42', ipv6: '2001:db8::41' })).server;
    const plan = await createPlan(t);
    const on = (server: { id: string }) => ({ placement: { web: server.id, mail: server.id, database: LOCAL } });
    const [account, elsewhere] = [
      await createAccount(t, plan.id, undefined, on(web)),
      await createAccount(t, plan.id, undefined, on(other)),
    ];
    const own = [
      { name: 'v6', type: 'AAAA', content: '2001:db8::41' },
      { name: 'away', type: 'AAAA', content: '2001:db8::99' },
    ];
    const [name, kept] = [await domainOf(account, own), await domainOf(elsewhere)];
    const keptBefore = await addresses(kept);
    const before = await serial(name);

    const changed = await patch(`/v1/servers/${web.id}`, { ipv6: null });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.ipv6).toBeNull();
    await eventually(async () => (await serial(name)) > before);
    expect(await addresses(name)).toEqual([
      '@ A 198.51.100.41',
      'away AAAA 2001:db8::99',
      'mail A 198.51.100.41',
      'www A 198.51.100.41',
    ]);
    // Another server's account whose records name the same address is not this server's to change.
    expect(await addresses(kept)).toEqual(keptBefore);
    expect(keptBefore).toContain('@ AAAA 2001:db8::41');

    // An IPv6 address again (and a new IPv4 one): the names the template gave both families get
    // it back, but for one that has an AAAA record of the owner's meanwhile; the owner's own
    // records stay theirs.
    const owners = { name: 'www', type: 'AAAA', content: '2001:db8::77' };
    expect((await t.post(`/v1/domains/${name}/records`, owners)).status).toBe(201);
    const removed = await serial(name);
    expect((await patch(`/v1/servers/${web.id}`, { ipv4: '198.51.100.51', ipv6: '2001:db8::51' })).status).toBe(200);
    await eventually(async () => (await serial(name)) > removed);
    expect(await addresses(name)).toEqual([
      '@ A 198.51.100.51',
      '@ AAAA 2001:db8::51',
      'away AAAA 2001:db8::99',
      'mail A 198.51.100.51',
      'mail AAAA 2001:db8::51',
      'www A 198.51.100.51',
      'www AAAA 2001:db8::77',
    ]);
    const given = (await t.get(`/v1/domains/${name}/records?type=AAAA&name=@`)).body.data;
    expect(given).toEqual([expect.objectContaining({ ttl: 3600, content: '2001:db8::51' })]);
    expect(await addresses(kept)).toEqual(keptBefore);
    // What the API moved or added is still the template's: mail switched off takes its records away.
    expect((await patch(`/v1/domains/${name}`, { mail_enabled: false })).status).toBe(200);
    expect(await addresses(name)).toEqual([
      '@ A 198.51.100.51',
      '@ AAAA 2001:db8::51',
      'away AAAA 2001:db8::99',
      'www A 198.51.100.51',
      'www AAAA 2001:db8::77',
    ]);
  });

  it('the local server’s, set through the API where the configured ones were: its accounts’ records follow, and new zones use them', async () => {
    const account = await createAccount(t, (await createPlan(t)).id);
    const name = await domainOf(account);
    expect(await addresses(name)).toEqual(['@ A 192.0.2.10', 'mail A 192.0.2.10', 'www A 192.0.2.10']);
    const before = await serial(name);
    const changed = await patch(`/v1/servers/${LOCAL}`, { ipv4: '192.0.2.20' });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.ipv4).toBe('192.0.2.20');
    await eventually(async () => (await addresses(name)).every((r) => r.endsWith('192.0.2.20')));
    expect(await serial(name)).toBeGreaterThan(before);
    const other = await createAccount(t, (await createPlan(t)).id);
    expect(await addresses(await domainOf(other))).toEqual(['@ A 192.0.2.20', 'mail A 192.0.2.20', 'www A 192.0.2.20']);
    // Changing something else changes no zone.
    const settled = await serial(name);
    expect((await patch(`/v1/servers/${LOCAL}`, { name: 'local-1' })).status).toBe(200);
    expect((await patch(`/v1/servers/${LOCAL}`, { ipv4: '192.0.2.20' })).status).toBe(200);
    expect(await serial(name)).toBe(settled);
  });
});
