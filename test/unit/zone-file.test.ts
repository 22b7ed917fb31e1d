import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderZoneFile, txtPresentation, type Zone } from '../../src/provisioning/render/zone-file.js';
import { testDir } from '../helpers/temp-dir.js';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../fixtures/zones', name), 'utf8');

const zone: Zone = {
  name: 'example.org',
  serial: 2026112105,
  // Deliberately unordered: rendering sorts.
  records: [
    { name: 'www', type: 'CNAME', ttl: 3600, content: 'example.org.' },
    { name: 'quote', type: 'TXT', ttl: 3600, content: 'say "hi" \\ bye' },
    { name: '@', type: 'MX', ttl: 300, content: '20 backup-mx.example.net.' },
    { name: '@', type: 'NS', ttl: 3600, content: 'ns2.host.example.net.' },
    { name: 'mail', type: 'A', ttl: 3600, content: '192.0.2.25' },
    { name: '@', type: 'A', ttl: 3600, content: '192.0.2.10' },
    { name: '_sip._tcp', type: 'SRV', ttl: 3600, content: '10 60 5060 sip.example.org.' },
    { name: '@', type: 'CAA', ttl: 3600, content: '0 issue "letsencrypt.org"' },
    { name: '@', type: 'TXT', ttl: 3600, content: 'v=spf1 mx -all' },
    { name: '@', type: 'MX', ttl: 300, content: '10 mail.example.org.' },
    { name: '@', type: 'AAAA', ttl: 3600, content: '2001:db8::10' },
    { name: '@', type: 'NS', ttl: 3600, content: 'ns1.host.example.net.' },
    { name: '@', type: 'HTTPS', ttl: 3600, content: '1 . alpn=h2,h3 ipv4hint=192.0.2.10' },
    { name: '_443._tcp.www', type: 'TLSA', ttl: 3600, content: `3 1 1 ${'ab'.repeat(32)}` },
    { name: 'mail', type: 'SSHFP', ttl: 3600, content: `4 2 ${'cd'.repeat(32)}` },
    { name: 'sub', type: 'DS', ttl: 3600, content: `60485 13 2 ${'ef'.repeat(32)}` },
    { name: 'sub', type: 'NS', ttl: 3600, content: 'ns1.example.net.' },
    { name: '_api._tcp', type: 'SVCB', ttl: 3600, content: '1 api.example.org. port=8443' },
    { name: '10', type: 'PTR', ttl: 3600, content: 'host.example.org.' },
    {
      name: '@',
      type: 'SOA',
      ttl: 3600,
      content: 'ns1.host.example.net. hostmaster.example.org. 2026112105 3600 900 1209600 300',
    },
  ],
};

const namedCheckzone = spawnSync('named-checkzone', ['-v']).status === 0;

describe('zone files', () => {
  it('render deterministically, matching the golden file', () => {
    expect(renderZoneFile(zone)).toBe(fixture('example.org.zone'));
    expect(renderZoneFile({ ...zone, records: [...zone.records].reverse() })).toBe(fixture('example.org.zone'));
  });

  it('render ALIAS as PowerDNS reads it (BIND has no ALIAS: the DNS server must flatten it)', () => {
    const withAlias = {
      ...zone,
      records: [
        ...zone.records.filter((r) => r.name !== '@' || r.type === 'SOA' || r.type === 'NS'),
        { name: '@', type: 'ALIAS', ttl: 300, content: 'lb.example.net.' },
      ],
    };
    expect(renderZoneFile(withAlias)).toContain('@\t300\tIN\tALIAS\tlb.example.net.\n');
  });

  it('split TXT over 255 octets into strings without cutting a UTF-8 character', () => {
    expect(txtPresentation('a'.repeat(300))).toBe(`"${'a'.repeat(255)}" "${'a'.repeat(45)}"`);
    const text = 'é'.repeat(200); // 400 octets
    const pieces = txtPresentation(text).match(/"[^"]*"/g) ?? [];
    expect(pieces).toHaveLength(2);
    expect(pieces[0]).toBe(`"${'\\195\\169'.repeat(127)}"`);
    expect(txtPresentation('')).toBe('""');
  });

  it.skipIf(!namedCheckzone)('are accepted by named-checkzone (needs bind9-utils)', () => {
    const file = path.join(testDir('zone'), 'example.org.zone');
    writeFileSync(file, renderZoneFile(zone));
    const r = spawnSync('named-checkzone', ['-i', 'local', 'example.org', file], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toContain('loaded serial 2026112105');
    expect(r.status).toBe(0);
  });
});
