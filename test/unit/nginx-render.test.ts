import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderServerBlock, type SiteSpec } from '../../src/provisioning/render/nginx.js';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../fixtures/web', name), 'utf8');

const site: SiteSpec = {
  id: 'site_01jd3x9v6ef8tb2q4w5n7k8m9p',
  hostnames: ['example.org', 'www.example.org', 'shop.example.org'],
  root: '/srv/berth/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p/sites/site_01jd3x9v6ef8tb2q4w5n7k8m9p/current',
  suspended: false,
};
const options = { pagesDir: '/srv/berth/rendered/web/pages', listen: ['80', '[::]:80'] };

describe('nginx server blocks (golden files)', () => {
  it('serves the live release for the hostname and its aliases', () => {
    expect(renderServerBlock(site, options)).toBe(fixture('active.conf'));
  });

  it('answers 503 with the suspension page when suspended', () => {
    expect(renderServerBlock({ ...site, suspended: true }, options)).toBe(fixture('suspended.conf'));
  });

  it('refuses values that could break out of a directive', () => {
    expect(() => renderServerBlock({ ...site, root: '/srv/x; include /etc/passwd' }, options)).toThrow(/cannot be written/);
    expect(() => renderServerBlock({ ...site, hostnames: ['a.org}'] }, options)).toThrow(/cannot be written/);
  });
});
