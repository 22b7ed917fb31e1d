import { describe, expect, it } from 'vitest';
import { coversAll, grants } from '../../src/auth/scopes.js';
import { generateTokenSecret, hasValidFormat, hashSecret } from '../../src/auth/secret.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { cidrMatcher, parseCidr } from '../../src/lib/cidr.js';
import { applyMergePatch, mergeFields, replacement } from '../../src/lib/merge-patch.js';
import { pgTimestampToRfc3339 } from '../../src/lib/time.js';
import { exceededLimits } from '../../src/modules/accounts/usage.js';

describe('token secrets', () => {
  it('have the berth_ format with a valid checksum, and any typo fails it', () => {
    const s = generateTokenSecret();
    expect(s).toMatch(/^berth_[0-9A-Za-z]{40}$/);
    expect(hasValidFormat(s)).toBe(true);
    for (let i = 6; i < s.length; i++) {
      const typo = s.slice(0, i) + (s[i] === 'x' ? 'y' : 'x') + s.slice(i + 1);
      expect(hasValidFormat(typo)).toBe(false);
    }
    expect(hasValidFormat('ghp_' + s.slice(6))).toBe(false);
  });

  it('are distinct and hash to SHA-256 hex', () => {
    const set = new Set(Array.from({ length: 200 }, generateTokenSecret));
    expect(set.size).toBe(200);
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('scopes', () => {
  it('* grants all, write implies read, nothing else', () => {
    expect(grants(['*'], 'accounts:write')).toBe(true);
    expect(grants(['accounts:write'], 'accounts:read')).toBe(true);
    expect(grants(['accounts:read'], 'accounts:write')).toBe(false);
    expect(grants(['plans:write'], 'accounts:read')).toBe(false);
    expect(coversAll(['accounts:write'], ['accounts:read', 'accounts:write'])).toBe(true);
    expect(coversAll(['accounts:write'], ['*'])).toBe(false);
  });
});

describe('CIDRs', () => {
  it('parses and matches IPv4, IPv6 and mapped addresses', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ address: '10.0.0.0', prefix: 8, family: 'ipv4' });
    expect(parseCidr('2001:db8::/129')).toBeNull();
    expect(parseCidr('10.0.0.0/x')).toBeNull();
    expect(parseCidr('example.com')).toBeNull();
    const m = cidrMatcher(['10.0.0.0/8', '2001:db8::/32', '192.0.2.7']);
    expect(m('10.1.2.3')).toBe(true);
    expect(m('::ffff:10.1.2.3')).toBe(true);
    expect(m('11.0.0.1')).toBe(false);
    expect(m('2001:db8::1')).toBe(true);
    expect(m('192.0.2.7')).toBe(true);
    expect(m('192.0.2.8')).toBe(false);
  });
});

describe('JSON Merge Patch (RFC 7396 appendix A)', () => {
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('%j + %j = %j', (target, patch, result) => {
    expect(applyMergePatch(target, patch)).toEqual(result);
  });

  it('mergeFields: top-level null sets a field to null', () => {
    expect(mergeFields({ a: 1, b: { x: 1, y: 2 } }, { a: null, b: { x: null } })).toEqual({ a: null, b: { y: 2 } });
  });

  it('mergeFields: a PUT body replaces each field it holds whole, an object too, through a rest spread', () => {
    const current = { a: 1, b: { x: 1, y: 2 }, c: 3 };
    // As a service takes its write-only fields out before merging the rest.
    const { password, ...fields } = replacement({ password: 'secret', b: { x: 9 } });
    expect(password).toBe('secret');
    expect(mergeFields(current, fields)).toEqual({ a: 1, b: { x: 9 }, c: 3 });
    expect(mergeFields(current, { b: { x: 9 } })).toEqual({ a: 1, b: { x: 9, y: 2 }, c: 3 });
    expect(Object.keys(replacement({ b: {} }))).toEqual(['b']);
    expect(JSON.stringify(replacement({ b: {} }))).toBe('{"b":{}}');
  });
});

describe('config', () => {
  it('defaults are the documented ones', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ host: '127.0.0.1', port: 8080, dataDir: './data', databaseUrl: null, logLevel: 'info' });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it.each([
    [{ BERTH_PORT: 'eighty' }, /BERTH_PORT/],
    [{ BERTH_PORT: '70000' }, /BERTH_PORT/],
    [{ BERTH_LOG_LEVEL: 'loud' }, /BERTH_LOG_LEVEL/],
    [{ BERTH_BOOTSTRAP_TOKEN: 'too-short' }, /BERTH_BOOTSTRAP_TOKEN/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ BERTH_WEB_IPV4: '999.1.1.1' }, /BERTH_WEB_IPV4/],
    [{ BERTH_JOBS: 'maybe' }, /BERTH_JOBS/],
  ])('%j is refused with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('timestamps from the database', () => {
  it.each([
    ['2026-11-21 10:00:00+00', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21 10:00:00.5+00', '2026-11-21T10:00:00.500Z'],
    ['2026-11-21 10:00:00.123456+00', '2026-11-21T10:00:00.123Z'],
    ['2026-11-21 12:00:00+02', '2026-11-21T10:00:00.000Z'],
  ])('%s is %s', (text, rfc3339) => {
    expect(pgTimestampToRfc3339(text)).toBe(rfc3339);
  });
});

describe('quota checks', () => {
  it('lists every exceeded limit', () => {
    const limits = {
      max_sites: 1,
      max_domains: 1,
      max_email_accounts: 1,
      max_email_quota_mb: 1,
      disk_quota_mb: 1,
      max_backups: 0,
      max_dns_records_per_domain: 1,
      max_databases: 1,
      max_database_users: 2,
      max_database_connections: 20,
      php_workers: 5,
      max_cron_jobs: 10,
      cron_min_interval_minutes: 5,
      max_ssh_keys: 1,
    };
    const usage = {
      sites: 2,
      domains: 1,
      email_accounts: 0,
      databases: 2,
      database_users: 2,
      disk_bytes: 2 * 1024 * 1024,
      backups: 1,
      cron_jobs: 0,
      ssh_keys: 2,
      bandwidth_bytes: 0,
      bandwidth_daily: [],
    };
    expect(exceededLimits(limits, usage).map((e) => e.limit)).toEqual([
      'max_sites',
      'max_databases',
      'max_backups',
      'max_ssh_keys',
      'disk_quota_mb',
    ]);
  });
});
