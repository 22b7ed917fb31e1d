import { isIP } from 'node:net';
import { type Static, Type } from 'typebox';
import { phpValue, type PhpSettings } from './php-fpm.js';

/**
 * A site's web apply unit as the web server needs it, and the pure function that renders its
 * nginx server blocks. The document root is the site's `current` symlink, which a deployment
 * swaps atomically; nginx resolves it per request, so a new release needs no reload.
 */

export interface SiteSpec {
  id: string;
  /** The hostname first, then the aliases. */
  hostnames: string[];
  /** `<site>/current`, the symlink to the live release. */
  root: string;
  /** The site or its account is suspended: every request gets 503 and the suspension page. */
  suspended: boolean;
  /**
   * Its account is frozen for a move (optional: false): every request gets 503 with
   * `Retry-After`, so that nothing is written here after the copy was made.
   */
  frozen?: boolean;
  /**
   * The account moved to the web server at this address (optional: null): every request is
   * proxied there, on the port and with the scheme it came on, while the records that still name
   * this server may be cached.
   */
  forwardTo?: string | null;
  /** The certificate to serve HTTPS with (null: plain HTTP only). The driver writes its files. */
  tls: SiteTls | null;
  /** A PHP site: its account's pool and the site's settings (null: static files only). */
  php: { socket: string; settings: PhpSettings } | null;
}

export const SiteTls = Type.Object({
  /** The leaf followed by its chain. */
  fullchainPem: Type.String({ maxLength: 65536 }),
  privateKeyPem: Type.String({ maxLength: 16384 }),
  /** Plain HTTP answers 308 to `https://` (ACME's HTTP-01 proofs excepted). */
  redirectHttp: Type.Boolean(),
  /** `Strict-Transport-Security: max-age=31536000` on HTTPS answers. */
  hsts: Type.Boolean(),
});
export type SiteTls = Static<typeof SiteTls>;

export interface WebServerOptions {
  /** Where the shared pages (the suspension page) live. */
  pagesDir: string;
  /** HTTP-01 proofs, served at `/.well-known/acme-challenge/` by every plain-HTTP block. */
  challengeDir: string;
  /** `listen` arguments: `80`, `[::]:80`, `127.0.0.1:8080`. */
  listen: string[];
  /** `listen` arguments of the HTTPS block: `443`, `[::]:443`. */
  listenTls: string[];
  /** Where the driver wrote the site's `<id>.crt` (full chain) and `<id>.key`. */
  certDir: string;
  /** Where each site logs its requests (`<id>.log`, nginx's `combined` format), counted as its traffic. */
  logDir?: string;
}

/** nginx directive arguments are quoted when they could be read as something else. */
function arg(value: string, what: string): string {
  if (/[\s;{}"'\\$]/.test(value)) throw new Error(`${what} "${value}" cannot be written into an nginx configuration`);
  return value;
}

/** How long a client is asked to wait while a site is frozen for a move (its freeze lasts seconds). */
const FROZEN_RETRY_AFTER_S = 10;
const FROZEN_ANSWER = `        add_header Retry-After ${FROZEN_RETRY_AFTER_S} always;`;

/** Whether a rendered server block serves its site frozen. */
export const servesFrozen = (block: string) => block.includes(FROZEN_ANSWER);

/** The servers of a fleet listen on the same ports: the target is asked where this server was. */
function forward(address: string): string[] {
  if (!isIP(address)) throw new Error(`"${address}" is not an IP address to forward to`);
  const host = isIP(address) === 6 ? `[${address}]` : address;
  return [
    '    location / {',
    `        proxy_pass $scheme://${host}:$server_port;`,
    '        proxy_set_header Host $host;',
    '        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '        proxy_set_header X-Forwarded-Proto $scheme;',
    '        proxy_ssl_server_name on;',
    '        proxy_ssl_name $host;',
    '    }',
  ];
}

function content(site: SiteSpec, o: WebServerOptions): string[] {
  if (site.forwardTo) return forward(site.forwardTo);
  if (site.frozen && !site.suspended) return ['    location / {', FROZEN_ANSWER, '        return 503;', '    }'];
  return site.suspended
    ? [
        `    root ${arg(o.pagesDir, 'pages directory')};`,
        '    error_page 503 /suspended.html;',
        '    location = /suspended.html {',
        '        internal;',
        '    }',
        '    location / {',
        '        return 503;',
        '    }',
      ]
    : site.php
      ? php(site.root, site.php)
      : [
          `    root ${arg(site.root, 'document root')};`,
          '    index index.html index.htm;',
          '    location / {',
          '        try_files $uri $uri/ =404;',
          '    }',
        ];
}

/** FastCGI parameters, written out: the block must not depend on where nginx keeps `fastcgi_params`. */
const FASTCGI_PARAMS = [
  ['QUERY_STRING', '$query_string'],
  ['REQUEST_METHOD', '$request_method'],
  ['CONTENT_TYPE', '$content_type'],
  ['CONTENT_LENGTH', '$content_length'],
  ['SCRIPT_NAME', '$fastcgi_script_name'],
  ['REQUEST_URI', '$request_uri'],
  ['DOCUMENT_URI', '$document_uri'],
  ['SERVER_PROTOCOL', '$server_protocol'],
  ['REQUEST_SCHEME', '$scheme'],
  ['HTTPS', '$https if_not_empty'],
  ['GATEWAY_INTERFACE', 'CGI/1.1'],
  ['SERVER_SOFTWARE', 'nginx'],
  ['REMOTE_ADDR', '$remote_addr'],
  ['REMOTE_PORT', '$remote_port'],
  ['SERVER_ADDR', '$server_addr'],
  ['SERVER_PORT', '$server_port'],
  ['SERVER_NAME', '$host'],
  ['REDIRECT_STATUS', '200'],
  // httpoxy: a request's `Proxy:` header must not become PHP's HTTP_PROXY.
  ['HTTP_PROXY', '""'],
];

/**
 * A PHP site: `*.php` to the account's pool, other paths to a file, a directory or the front
 * controller (`/index.php?$query_string`). `$realpath_root` resolves the `current` link per
 * request, so PHP (and its opcache) see the release a deployment switched to.
 */
function php(root: string, p: NonNullable<SiteSpec['php']>): string[] {
  return [
    `    root ${arg(root, 'document root')};`,
    '    index index.php index.html index.htm;',
    `    client_max_body_size ${Math.trunc(p.settings.upload_max_filesize_mb)}m;`,
    '    location / {',
    '        try_files $uri $uri/ /index.php?$query_string;',
    '    }',
    '    location ~ \\.php$ {',
    '        try_files $fastcgi_script_name =404;',
    `        fastcgi_pass unix:${arg(p.socket, 'PHP socket')};`,
    '        fastcgi_param SCRIPT_FILENAME $realpath_root$fastcgi_script_name;',
    '        fastcgi_param DOCUMENT_ROOT $realpath_root;',
    ...FASTCGI_PARAMS.map(([k, v]) => `        fastcgi_param ${k} ${v};`),
    `        fastcgi_param PHP_VALUE "${phpValue(p.settings)}";`,
    '    }',
  ];
}

/** A site as the server its account left serves it while forwarding: every request proxied to `to`. */
export const forwardedSite = (site: Pick<SiteSpec, 'id' | 'hostnames' | 'tls'>, to: string): SiteSpec => ({
  ...site,
  root: '',
  suspended: false,
  php: null,
  forwardTo: to,
});

export const certificateFiles = (certDir: string, id: string) => ({
  certificate: `${certDir}/${id}.crt`,
  key: `${certDir}/${id}.key`,
});

export function renderServerBlock(site: SiteSpec, o: WebServerOptions): string {
  const id = arg(site.id, 'site id');
  const names = `    server_name ${site.hostnames.map((h) => arg(h, 'hostname')).join(' ')};`;
  // Answered over plain HTTP in every case, so a certificate can be obtained and renewed
  // while HTTP redirects to HTTPS.
  const challenges = [
    '    location ^~ /.well-known/acme-challenge/ {',
    `        alias ${arg(o.challengeDir, 'challenge directory')}/;`,
    '        default_type text/plain;',
    '    }',
  ];
  // A forwarding source's requests are counted where they are answered, by the target.
  const log = o.logDir && !site.forwardTo ? [`    access_log ${arg(o.logDir, 'log directory')}/${id}.log combined;`] : [];
  const http = [
    `# Site ${id}, rendered by Berth.`,
    'server {',
    ...o.listen.map((l) => `    listen ${arg(l, 'listen address')};`),
    names,
    ...log,
    ...challenges,
    ...(site.tls?.redirectHttp
      ? ['    location / {', '        return 308 https://$host$request_uri;', '    }']
      : content(site, o)),
    '}',
  ];
  if (!site.tls) return [...http, ''].join('\n');
  const files = certificateFiles(arg(o.certDir, 'certificate directory'), id);
  const https = [
    'server {',
    ...o.listenTls.map((l) => `    listen ${arg(l, 'listen address')} ssl http2;`),
    names,
    ...log,
    `    ssl_certificate ${files.certificate};`,
    `    ssl_certificate_key ${files.key};`,
    '    ssl_protocols TLSv1.2 TLSv1.3;',
    ...(site.tls.hsts ? ['    add_header Strict-Transport-Security "max-age=31536000" always;'] : []),
    ...content(site, o),
    '}',
  ];
  return [...http, ...https, ''].join('\n');
}

export const SUSPENSION_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Site suspended</title></head>
<body><h1>This site is suspended</h1><p>Please contact the site's owner or hosting provider.</p></body>
</html>
`;
