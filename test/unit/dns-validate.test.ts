import { describe, expect, it } from 'vitest';
import type { ZoneEntry } from '../../src/modules/domains/records/repo.js';
import { checkZone, normalizeRecord, unquoteTxt } from '../../src/modules/domains/records/validate.js';

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
    expect(bad('@', 'HINFO', 'x')).toEqual(['/type invalid_type']);
  });

  it('PTR and ALIAS: a host name', () => {
    expect(ok('10', 'PTR', 'host.example.net.')?.content).toBe('host.example.net.');
    expect(ok('@', 'ALIAS', 'lb.cdn.example.net.')?.content).toBe('lb.cdn.example.net.');
    expect(ok('@', 'ALIAS', 'www')?.content).toBe('www.example.org.');
    expect(bad('@', 'ALIAS', '192.0.2.1')).toEqual(['/content invalid_target']);
    expect(bad('1', 'PTR', 'a b')).toEqual(['/content invalid_target']);
  });

  it('DS: below the apex, key tag, algorithm, digest type and a digest of its length (RFC 4034)', () => {
    const sha256 = 'E2D3C916F6DEEAC73294E8268FB5885044A833FC5459588F4A9184CFC41A5766';
    expect(ok('sub', 'DS', `60485 5 2 ${sha256.slice(0, 32)} ${sha256.slice(32)}`)?.content).toBe(
      `60485 5 2 ${sha256.toLowerCase()}`,
    );
    expect(ok('sub', 'DS', '60485 13 1 2bb183af5f22588179a53b0a98631fad1a292118')?.content).toMatch(/^60485 13 1 /);
    expect(bad('@', 'DS', `60485 5 2 ${sha256}`)).toEqual(['/content ds_at_apex']);
    expect(bad('sub', 'DS', `60485 5 2 ${sha256.slice(2)}`)).toEqual(['/content invalid_ds']);
    expect(bad('sub', 'DS', `60485 5 3 ${sha256}`)).toEqual(['/content invalid_ds']);
    expect(bad('sub', 'DS', `70000 5 2 ${sha256}`)).toEqual(['/content invalid_ds']);
  });

  it('TLSA: owner _port._proto, usage, selector, matching type and data (RFC 6698)', () => {
    const sha256 = 'd2abde240d7cd3ee6b4b28c54df034b97983a1d16e8a410e4561cb106618e971';
    expect(ok('_443._tcp.www', 'TLSA', `3 1 1 ${sha256.toUpperCase()}`)?.content).toBe(`3 1 1 ${sha256}`);
    expect(bad('www', 'TLSA', `3 1 1 ${sha256}`)).toEqual(['/content invalid_tlsa_owner']);
    expect(bad('_443._tcp', 'TLSA', `4 1 1 ${sha256}`)).toEqual(['/content invalid_tlsa']);
    expect(bad('_443._tcp', 'TLSA', `3 1 2 ${sha256}`)).toEqual(['/content invalid_tlsa']);
    expect(bad('_443._tcp', 'TLSA', '3 1 0 abc')).toEqual(['/content invalid_tlsa']);
  });

  it('SSHFP: algorithm, type and a fingerprint of its length (RFC 4255)', () => {
    const sha256 = '123456789abcdef67890123456789abcdef67890123456789abcdef123456789';
    expect(ok('host', 'SSHFP', `4 2 ${sha256.toUpperCase()}`)?.content).toBe(`4 2 ${sha256}`);
    expect(bad('host', 'SSHFP', `5 2 ${sha256}`)).toEqual(['/content invalid_sshfp']);
    expect(bad('host', 'SSHFP', `4 1 ${sha256}`)).toEqual(['/content invalid_sshfp']);
  });

  it('SVCB and HTTPS: priority, target, known parameters in key order (RFC 9460)', () => {
    expect(ok('@', 'HTTPS', '1 . ipv4hint=192.0.2.1 alpn="h2,h3" port=8443')?.content).toBe(
      '1 . alpn=h2,h3 port=8443 ipv4hint=192.0.2.1',
    );
    expect(ok('@', 'HTTPS', '0 www')?.content).toBe('0 www.example.org.');
    expect(ok('_8443._foo.api', 'SVCB', '1 svc4.example.net. alpn=bar mandatory=alpn key65000=x')?.content).toBe(
      '1 svc4.example.net. mandatory=alpn alpn=bar key65000=x',
    );
    expect(ok('@', 'HTTPS', '1 . ipv6hint=2001:DB8::1 no-default-alpn alpn=h3')?.content).toBe(
      '1 . alpn=h3 no-default-alpn ipv6hint=2001:db8::1',
    );
    expect(bad('@', 'HTTPS', '0 . alpn=h2')).toEqual(['/content invalid_svcb']);
    expect(bad('@', 'HTTPS', '1 . bogus=1')).toEqual(['/content invalid_svcb']);
    expect(bad('@', 'HTTPS', '1 . port=70000')).toEqual(['/content invalid_svcb']);
    expect(bad('@', 'HTTPS', '1 . ipv4hint=2001:db8::1')).toEqual(['/content invalid_svcb']);
    expect(bad('@', 'HTTPS', '1 . mandatory=port alpn=h2')).toEqual(['/content invalid_svcb']);
    expect(bad('@', 'HTTPS', '1 . alpn=h2 alpn=h3')).toEqual(['/content invalid_svcb']);
    expect(bad('@', 'HTTPS', '1 192.0.2.1')).toEqual(['/content invalid_svcb']);
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
    // The set's first TTL agrees with the new record's, a later one does not.
    const mixed = [entry('@', 'A', '192.0.2.1', 300), entry('@', 'A', '192.0.2.3', 3600)];
    const added = entry('@', 'A', '192.0.2.2', 300);
    expect(checkZone(Z, [...mixed, added], new Map([[added, '/x']]))).toMatchObject([
      { pointer: '/x/ttl', code: 'ttl_mismatch', detail: expect.stringContaining('has TTL 3600') },
    ]);
    expect(check([entry('@', 'A', '192.0.2.1')], entry('@', 'A', '192.0.2.1'))).toEqual(['duplicate']);
    expect(check([entry('@', 'TXT', 'v=spf1 mx -all')], entry('@', 'TXT', 'v=spf1 a -all'))).toEqual(['duplicate_spf']);
    expect(check([entry('@', 'TXT', 'v=spf1 mx -all')], entry('mail', 'TXT', 'v=spf1 a -all'))).toEqual([]);
  });

  it('ALIAS: one per name and no A or AAAA beside it; DS only at a delegation', () => {
    expect(check([entry('@', 'A', '192.0.2.1')], entry('@', 'ALIAS', 'lb.example.net.'))).toEqual(['alias_conflict']);
    expect(check([entry('@', 'ALIAS', 'lb.example.net.')], entry('@', 'AAAA', '2001:db8::1'))).toEqual(['alias_conflict']);
    expect(check([entry('@', 'ALIAS', 'a.example.net.')], entry('@', 'ALIAS', 'b.example.net.'))).toEqual(['alias_conflict']);
    expect(check([entry('@', 'MX', '10 mail.example.org.')], entry('@', 'ALIAS', 'lb.example.net.'))).toEqual([]);
    const ds = entry('sub', 'DS', `1 13 2 ${'a'.repeat(64)}`);
    expect(check([], ds)).toEqual(['ds_without_delegation']);
    expect(check([entry('sub', 'NS', 'ns1.example.net.')], ds)).toEqual([]);
  });

  it('MX, NS and SRV targets are not CNAMEs inside the zone', () => {
    const alias = entry('alias', 'CNAME', 'mail.example.org.');
    expect(check([alias], entry('@', 'MX', '10 alias.example.org.'))).toEqual(['target_is_cname']);
    expect(check([alias], entry('sub', 'NS', 'alias.example.org.'))).toEqual(['target_is_cname']);
    expect(check([alias], entry('_x._tcp', 'SRV', '1 1 1 alias.example.org.'))).toEqual(['target_is_cname']);
    expect(check([alias], entry('@', 'MX', '10 mail.example.org.'))).toEqual([]);
  });
});
