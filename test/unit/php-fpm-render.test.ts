import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { installedPhpVersions, sortVersions } from '../../src/lib/php-versions.js';
import { phpValue, renderPool, unixUser } from '../../src/provisioning/render/php-fpm.js';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../fixtures/php', name), 'utf8');
const pool = {
  username: 'alice',
  version: '8.2',
  home: '/srv/berth/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p',
  tmp: '/srv/berth/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p/tmp',
  workers: 5,
};

describe('PHP-FPM pools', () => {
  it('render one pool per account and version: its user, on demand, confined (golden file)', () => {
    expect(renderPool(pool, { user: 'berth-alice', socket: '/run/php/berth-alice-8.2.sock', webGroup: 'www-data' })).toBe(
      fixture('pool.conf'),
    );
  });

  it('refuse paths and names that could add a directive', () => {
    const o = { user: 'berth-alice', socket: '/run/php/a.sock', webGroup: 'www-data' };
    expect(() => renderPool({ ...pool, home: '/srv/x\nphp_admin_value[open_basedir] = /' }, o)).toThrow(/unsafe home/);
    expect(() => renderPool(pool, { ...o, socket: 'relative.sock' })).toThrow(/unsafe socket/);
    expect(() => renderPool(pool, { ...o, webGroup: 'www data' })).toThrow(/unsafe group/);
  });

  it('name Unix users berth-<username>, shortened with a digest past 32 characters', () => {
    expect(unixUser('alice')).toBe('berth-alice');
    const long = unixUser('a'.repeat(32));
    expect(long).toHaveLength(32);
    expect(long).not.toBe(unixUser(`${'a'.repeat(31)}b`));
  });

  it('hand the site settings to PHP as PHP_VALUE lines', () => {
    expect(phpValue({ memory_limit_mb: 256, upload_max_filesize_mb: 10, max_execution_time_s: 60, display_errors: true })).toBe(
      'memory_limit=256M\\nupload_max_filesize=10M\\npost_max_size=10M\\nmax_execution_time=60\\ndisplay_errors=On',
    );
  });

  it('find the installed versions, newest first', () => {
    expect(sortVersions(['7.4', '8.10', '8.2'])).toEqual(['8.10', '8.2', '7.4']);
    expect(installedPhpVersions('/nonexistent')).toEqual(expect.any(Array));
  });
});
