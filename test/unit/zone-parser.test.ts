import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseZoneFile } from '../../src/modules/domains/zone/parser.js';
import { renderZoneFile } from '../../src/provisioning/render/zone-file.js';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../fixtures/zones', name), 'utf8');
const summary = (source: string, zone: string) => {
  const r = parseZoneFile(source, zone);
  return { records: r.records.map((x) => `${x.line}: ${x.name} ${x.ttl} ${x.type} ${x.content}`), errors: r.errors };
};

describe('zone file parser', () => {
  it('reads a hand-written BIND-style zone', () => {
    expect(summary(fixture('bind-style.zone'), 'shop.example.com')).toEqual({
      errors: [],
      records: [
        '4: @ 3600 SOA ns1.registrar.example. admin.shop.example.com. 2026010101 7200 3600 1209600 300',
        '10: @ 3600 NS ns1.registrar.example.',
        '11: @ 3600 NS ns2.registrar.example.',
        '12: @ 3600 A 203.0.113.10',
        '13: @ 3600 MX 10 mail.shop.example.com.',
        '14: @ 3600 MX 20 mx2.provider.example.',
        '15: @ 3600 TXT "v=spf1 mx include:_spf.provider.example ~all"',
        '16: www 300 CNAME shop.example.com.',
        '17: mail 3600 A 203.0.113.25',
        '18: mail 3600 AAAA 2001:db8::25',
        '19: api 600 A 203.0.113.30',
        '20: _sip._tcp 3600 SRV 10 60 5060 sip.shop.example.com.',
        '21: sip 3600 A 203.0.113.40',
        '22: @ 3600 CAA 0 issue "letsencrypt.org"',
        '23: selector1._domainkey 3600 TXT "v=DKIM1; k=rsa; " "p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC1"',
        '26: *.dev 3600 A 203.0.113.50',
      ],
    });
  });

  it('reads its own output back', () => {
    const zone = {
      name: 'example.org',
      serial: 2026112100,
      records: [
        {
          name: '@',
          type: 'SOA',
          ttl: 3600,
          content: 'ns1.example.net. hostmaster.example.org. 2026112100 3600 900 1209600 300',
        },
        { name: 'quote', type: 'TXT', ttl: 60, content: 'say "hi"; bye' },
        { name: 'www', type: 'A', ttl: 3600, content: '192.0.2.1' },
      ],
    };
    expect(summary(renderZoneFile(zone), 'example.org').records).toEqual([
      '3: @ 3600 SOA ns1.example.net. hostmaster.example.org. 2026112100 3600 900 1209600 300',
      '4: quote 60 TXT "say \\"hi\\"; bye"',
      '5: www 3600 A 192.0.2.1',
    ]);
  });

  it.each([
    ['$INCLUDE other.zone\nwww A 192.0.2.1', '/lines/1', 'include_refused'],
    ['www IN A 192.0.2.1\nold IN HINFO "PC" "Linux"', '/lines/2', 'unknown_type'],
    ['www CH A 192.0.2.1', '/lines/1', 'unsupported_class'],
    ['$GENERATE 1-10 host$ A 192.0.2.$', '/lines/1', 'unknown_directive'],
    ['www.elsewhere.net. IN A 192.0.2.1', '/lines/1', 'outside_zone'],
    ['\n\n   IN A 192.0.2.1', '/lines/3', 'missing_owner'],
    ['www IN A', '/lines/1', 'missing_rdata'],
  ])('refuses %j at its line', (source, pointer, code) => {
    expect(parseZoneFile(source, 'example.org').errors[0]).toMatchObject({ pointer, code });
  });
});
