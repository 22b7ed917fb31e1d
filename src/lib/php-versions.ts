import { readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * The PHP versions whose FPM is installed (Debian names the binaries `php-fpm8.2`), newest first:
 * what sites may choose unless BERTH_PHP_VERSIONS says otherwise.
 */
export function installedPhpVersions(searchPath = process.env.PATH ?? ''): string[] {
  const found = new Set<string>();
  for (const dir of new Set([...searchPath.split(path.delimiter), '/usr/sbin', '/usr/local/sbin'])) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const m = /^php-fpm(\d+\.\d+)$/.exec(name);
      if (m) found.add(m[1] as string);
    }
  }
  return sortVersions([...found]);
}

export const sortVersions = (versions: string[]): string[] =>
  [...versions].sort((a, b) => {
    const [am, an] = a.split('.').map(Number) as [number, number];
    const [bm, bn] = b.split('.').map(Number) as [number, number];
    return bm - am || bn - an;
  });
