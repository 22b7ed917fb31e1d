import { describe, expect, it } from 'vitest';
import { checkZone, normalizeRecord, unquoteTxt } from '../../src/modules/domains/records/validate.js';
import type { ZoneEntry } from '../../src/modules/domains/records/repo.js';

const Z = 'example.org';
const ok = (name: string, type: string, content: string) => {
  const r = normalizeRecord(Z, { name, type, content });
  expect(r.errors).toEqual([]);
  return r.record;
};
const bad = (name: string, type: string, content: string) => {
  const r = normalizeRecord(Z, { name, type, content });
  expect(r.record).toBeUndefined();
  return r.errors.map((e) => `${e.pointer} ${e.code}`);
};

describe('one record', () => {
  it('owner names: relative, @, absolute inside the zone, wildcard leftmost only', () => {
    expect(ok('WWW', 'A', '192.0.2.1')?.name).toBe('www');
    expect(ok('@', 'A', '192.0.2.1')?.name).toBe('@');
    expect(ok('example.org.', 'A', '192.0.2.1')?.name).toBe('@');
    expect(ok('api.example.org.', 'A', '192.0.2.1')?.name).toBe('api');
    expect(ok('*.dev', 'A', '192.0.2.1')?.name).toBe('*.dev');
    expect(ok('_dmarc', 'TXT', 'v=DMARC1; p=none')?.name).toBe('_dmarc');
    expect(bad('www.other.net.', 'A', '192.0.2.1')).toEqual(['/name outside_zone']);
    expect(bad('dev.*', 'A', '192.0.2.1')).toEqual(['/name invalid_wildcard']);
    expect(bad('a*b', 'A', '192.0.2.1')).toEqual(['/name invalid_name']);
    expect(bad('x'.repeat(64), 'A', '192.0.2.1')).toEqual(['/name label_too_long']);
    expect(bad(`${'abcdefghi.'.repeat(25)}x`, 'A', '192.0.2.1')).toEqual(['/name too_long']);
    expect(bad('-bad', 'A', '192.0.2.1')).toEqual(['/name invalid_name']);
  });

  it('A and AAAA', () => {
    expect(ok('www', 'A', '192.0.2.1')?.content).toBe('192.0.2.1');
    expect(ok('www', 'AAAA', '2001:DB8::1')?.content).toBe('2001:db8::1');
    expect(bad('www', 'A', '192.0.2')).toEqual(['/content invalid_ipv4']);
    expect(bad('www', 'A', '192.0.2.256')).toEqual(['/content invalid_ipv4']);
    expect(bad('www', 'A', '2001:db8::1')).toEqual(['/content invalid_ipv4']);
    expect(bad('www', 'AAAA', '192.0.2.1')).toEqual(['/content invalid_ipv6']);
  });

  it('CNAME: a host name, never at the apex', () => {
    expect(ok('www', 'CNAME', 'example.org.')?.content).toBe('example.org.');
    expect(ok('www', 'CNAME', '@')?.content).toBe('example.org.');
    expect(ok('www', 'CNAME', 'web')?.content).toBe('web.example.org.');
    expect(bad('@', 'CNAME', 'other.net.')).toEqual(['/name cname_at_apex']);
    expect(bad('www', 'CNAME', '192.0.2.1')).toEqual(['/content invalid_target']);
  });

  it('MX: preference and a host name, not an IP', () => {
    expect(ok('@', 'MX', '10  Mail.Example.org.')?.content).toBe('10 mail.example.org.');
    expect(bad('@', 'MX', 'mail.example.org.')).toEqual(['/content invalid_mx']);
    expect(bad('@', 'MX', '10 192.0.2.1')).toEqual(['/content invalid_mx']);
    expect(bad('@', 'MX', '70000 mail.example.org.')).toEqual(['/content invalid_mx']);
  });

  it('NS: delegations below the apex; the apex set is managed', () => {
    expect(ok('sub', 'NS', 'ns1.other.net.')?.content).toBe('ns1.other.net.');
    expect(bad('@', 'NS', 'ns9.other.net.')).toEqual(['/name managed']);
    expect(bad('sub', 'NS', '192.0.2.1')).toEqual(['/content invalid_target']);
  });

  it('SRV: owner _service._proto and four fields', () => {
    expect(ok('_sip._tcp', 'SRV', '10 60 5060 sip.example.org.')?.content).toBe('10 60 5060 sip.example.org.');
    expect(ok('_sip._udp.voice', 'SRV', '0 0 0 .')?.content).toBe('0 0 0 .');
    expect(bad('sip', 'SRV', '10 60 5060 sip.example.org.')).toEqual(['/content invalid_srv_owner']);
    expect(bad('_sip._tcp', 'SRV', '10 60 sip.example.org.')).toEqual(['/content invalid_srv']);
    expect(bad('_sip._tcp', 'SRV', '10 60 99999 sip.example.org.')).toEqual(['/content invalid_srv']);
  });

  it('CAA: flags 0 or 128, tags issue|issuewild|iodef', () => {
    expect(ok('@', 'CAA', '0 issue "letsencrypt.org"')?.content).toBe('0 issue "letsencrypt.org"');
    expect(ok('@', 'CAA', '128 IODEF mailto:security@example.org')?.content).toBe('128 iodef "mailto:security@example.org"');
    expect(bad('@', 'CAA', '1 issue "letsencrypt.org"')).toEqual(['/content invalid_caa']);
    expect(bad('@', 'CAA', '0 tbs "x"')).toEqual(['/content invalid_caa']);
  });

  it('TXT: plain text kept, quoted strings joined', () => {
    expect(ok('@', 'TXT', 'hello world')?.content).toBe('hello world');
    expect(ok('@', 'TXT', '"v=DKIM1; k=rsa; " "p=MIIB"')?.content).toBe('v=DKIM1; k=rsa; p=MIIB');
    expect(unquoteTxt('"say \\"hi\\""')).toBe('say "hi"');
  });

  it('SOA and unknown types are refused', () => {
    expect(bad('@', 'SOA', 'x')).toEqual(['/type managed']);
    expect(bad('@', 'PTR', 'x')).toEqual(['/type invalid_type']);
  });

  it('reports name and content failures together', () => {
    expect(normalizeRecord(Z, { name: 'a*', type: 'A', content: 'nope' }, '/create/1').errors.map((e) => e.pointer)).toEqual([
      '/create/1/name',
    ]);
    expect(normalizeRecord(Z, { name: '@', type: 'CNAME', content: '1.2.3.4' }).errors.map((e) => e.code)).toEqual([
      'cname_at_apex',
      'invalid_target',
    ]);
  });
});

describe('the set a record lands in', () => {
  const entry = (name: string, type: string, content: string, ttl = 3600): ZoneEntry => ({ name, type, content, ttl });
  const check = (existing: ZoneEntry[], added: ZoneEntry) =>
    checkZone(Z, [...existing, added], new Map([[added, '']])).map((e) => e.code);

  it('CNAME alone at its name, both ways', () => {
    expect(check([entry('www', 'A', '192.0.2.1')], entry('www', 'CNAME', 'example.org.'))).toEqual(['cname_conflict']);
    expect(check([entry('www', 'CNAME', 'example.org.')], entry('www', 'TXT', 'x'))).toEqual(['cname_conflict']);
    expect(check([entry('www', 'A', '192.0.2.1')], entry('api', 'CNAME', 'www.example.org.'))).toEqual([]);
  });

  it('one TTL per set, no duplicates, one SPF per name', () => {
    expect(check([entry('@', 'A', '192.0.2.1', 300)], entry('@', 'A', '192.0.2.2', 3600))).toEqual(['ttl_mismatch']);
    expect(check([entry('@', 'A', '192.0.2.1', 300)], entry('@', 'A', '192.0.2.2', 300))).toEqual([]);
    expect(check([entry('@', 'A', '192.0.2.1')], entry('@', 'A', '192.0.2.1'))).toEqual(['duplicate']);
    expect(check([entry('@', 'TXT', 'v=spf1 mx -all')], entry('@', 'TXT', 'v=spf1 a -all'))).toEqual(['duplicate_spf']);
    expect(check([entry('@', 'TXT', 'v=spf1 mx -all')], entry('mail', 'TXT', 'v=spf1 a -all'))).toEqual([]);
  });

  it('MX, NS and SRV targets are not CNAMEs inside the zone', () => {
    const alias = entry('alias', 'CNAME', 'mail.example.org.');
    expect(check([alias], entry('@', 'MX', '10 alias.example.org.'))).toEqual(['target_is_cname']);
    expect(check([alias], entry('sub', 'NS', 'alias.example.org.'))).toEqual(['target_is_cname']);
    expect(check([alias], entry('_x._tcp', 'SRV', '1 1 1 alias.example.org.'))).toEqual(['target_is_cname']);
    expect(check([alias], entry('@', 'MX', '10 mail.example.org.'))).toEqual([]);
  });
});
