/**
 * A site's web apply unit as the web server needs it, and the pure function that renders its
 * nginx server block. The document root is the site's `current` symlink, which a deployment
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
}

export interface WebServerOptions {
  /** Where the shared pages (the suspension page) live. */
  pagesDir: string;
  /** `listen` arguments: `80`, `[::]:80`, `127.0.0.1:8080`. */
  listen: string[];
}

/** nginx directive arguments are quoted when they could be read as something else. */
function arg(value: string, what: string): string {
  if (/[\s;{}"'\\$]/.test(value)) throw new Error(`${what} "${value}" cannot be written into an nginx configuration`);
  return value;
}

export function renderServerBlock(site: SiteSpec, o: WebServerOptions): string {
  const head = [
    `# Site ${arg(site.id, 'site id')}, rendered by Berth.`,
    'server {',
    ...o.listen.map((l) => `    listen ${arg(l, 'listen address')};`),
    `    server_name ${site.hostnames.map((h) => arg(h, 'hostname')).join(' ')};`,
  ];
  const body = site.suspended
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
    : [
        `    root ${arg(site.root, 'document root')};`,
        '    index index.html index.htm;',
        '    location / {',
        '        try_files $uri $uri/ =404;',
        '    }',
      ];
  return [...head, ...body, '}', ''].join('\n');
}

export const SUSPENSION_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Site suspended</title></head>
<body><h1>This site is suspended</h1><p>Please contact the site's owner or hosting provider.</p></body>
</html>
`;
