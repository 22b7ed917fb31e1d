import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forwardedSite, renderServerBlock, type SiteSpec } from '../../src/provisioning/render/nginx.js';
import { DEFAULT_PHP_SETTINGS } from '../../src/provisioning/render/php-fpm.js';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../fixtures/web', name), 'utf8');

const site: SiteSpec = {
  id: 'site_01jd3x9v6ef8tb2q4w5n7k8m9p',
  hostnames: ['example.org', 'www.example.org', 'shop.example.org'],
  root: '/srv/berth/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p/sites/site_01jd3x9v6ef8tb2q4w5n7k8m9p/current',
  suspended: false,
  tls: null,
  php: null,
};
const tls = { fullchainPem: 'unused by the renderer', privateKeyPem: 'unused', redirectHttp: false, hsts: false };
const options = {
  pagesDir: '/srv/berth/rendered/web/pages',
  challengeDir: '/srv/berth/rendered/web/acme-challenge',
  certDir: '/srv/berth/rendered/web/certs',
  listen: ['80', '[::]:80'],
  listenTls: ['443', '[::]:443'],
  logDir: '/srv/berth/logs/web',
};

describe('nginx server blocks (golden files)', () => {
  it('serves the live release for the hostname and its aliases, and ACME proofs', () => {
    expect(renderServerBlock(site, options)).toBe(fixture('active.conf'));
  });

  it('answers 503 with the suspension page when suspended', () => {
    expect(renderServerBlock({ ...site, suspended: true }, options)).toBe(fixture('suspended.conf'));
  });

  it('answers 503 with Retry-After while its account is frozen for a move; a suspension still shows its page', () => {
    expect(renderServerBlock({ ...site, frozen: true }, options)).toBe(fixture('frozen.conf'));
    expect(renderServerBlock({ ...site, frozen: true, suspended: true }, options)).toBe(fixture('suspended.conf'));
  });

  it('proxies every request to the server its account moved to, whatever else holds, on the port and scheme it came on', () => {
    expect(renderServerBlock({ ...site, frozen: true, forwardTo: '127.0.0.12' }, options)).toBe(fixture('forwarded.conf'));
    expect(renderServerBlock(forwardedSite(site, '127.0.0.12'), options)).toBe(fixture('forwarded.conf'));
    expect(renderServerBlock({ ...site, forwardTo: '2001:db8::12' }, options)).toContain(
      'proxy_pass $scheme://[2001:db8::12]:$server_port;',
    );
    expect(() => renderServerBlock({ ...site, forwardTo: 'evil; root /' }, options)).toThrow(/not an IP address/);
  });

  it('serves HTTPS (TLS 1.2/1.3, HTTP/2) beside plain HTTP with a certificate', () => {
    expect(renderServerBlock({ ...site, tls }, options)).toBe(fixture('https.conf'));
  });

  it('redirects plain HTTP with 308 (proofs excepted) and sends HSTS when asked', () => {
    expect(renderServerBlock({ ...site, tls: { ...tls, redirectHttp: true, hsts: true } }, options)).toBe(
      fixture('https-redirect-hsts.conf'),
    );
  });

  it('passes *.php to the account’s pool with the site’s settings, index.php as the fallback', () => {
    const php = {
      socket: '/run/php/berth-alice-8.2.sock',
      settings: { ...DEFAULT_PHP_SETTINGS, memory_limit_mb: 256, display_errors: true },
    };
    expect(renderServerBlock({ ...site, php }, options)).toBe(fixture('php.conf'));
    // Suspended: the 503 page, PHP or not.
    expect(renderServerBlock({ ...site, php, suspended: true }, options)).toBe(fixture('suspended.conf'));
  });

  it('refuses values that could break out of a directive', () => {
    expect(() => renderServerBlock({ ...site, root: '/srv/x; include /etc/passwd' }, options)).toThrow(/cannot be written/);
    expect(() => renderServerBlock({ ...site, hostnames: ['a.org}'] }, options)).toThrow(/cannot be written/);
    expect(() => renderServerBlock({ ...site, tls }, { ...options, certDir: '/x y' })).toThrow(/cannot be written/);
  });
});
