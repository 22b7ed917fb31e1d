const SCOPE_AREAS = [
  'accounts',
  'plans',
  'resellers',
  'domains',
  'dns',
  'emails',
  'sites',
  'certificates',
  'databases',
  'backups',
  'webhooks',
  'events',
  'tokens',
  'servers',
  'cron',
  'ssh',
] as const;
export type ScopeArea = (typeof SCOPE_AREAS)[number];
export type Scope = `${ScopeArea}:${'read' | 'write'}` | '*';

export const ALL_SCOPES: Scope[] = ['*', ...SCOPE_AREAS.flatMap((a) => [`${a}:read`, `${a}:write`] as Scope[])];

/**
 * `*` grants everything; `<area>:write` implies `<area>:read`. A site's certificate is part of
 * the site: `sites:<level>` grants `certificates:<level>` too.
 */
export function grants(held: readonly string[], needed: Scope): boolean {
  if (held.includes('*') || held.includes(needed)) return true;
  if (needed.startsWith('certificates:') && grants(held, needed.replace('certificates:', 'sites:') as Scope)) return true;
  return needed.endsWith(':read') && held.includes(needed.replace(/:read$/, ':write'));
}

/** True when every scope of `requested` is granted by `held` (no broadening when minting). */
export const coversAll = (held: readonly string[], requested: readonly string[]): boolean =>
  requested.every((s) => (s === '*' ? held.includes('*') : grants(held, s as Scope)));
