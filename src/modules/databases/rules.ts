import type { FieldError } from '../../lib/errors.js';
import { DATABASE_PRIVILEGES as PRIVILEGES } from '../../provisioning/render/mariadb.js';

/** The database-level privileges a grant may name; `ALL` stands for every one. */
export { PRIVILEGES };

/** Character sets and the collations MariaDB 10.6+ has for each; the first is the default. */
export const COLLATIONS: Readonly<Record<string, readonly string[]>> = {
  utf8mb4: ['utf8mb4_unicode_ci', 'utf8mb4_general_ci', 'utf8mb4_bin', 'utf8mb4_unicode_520_ci'],
  utf8mb3: ['utf8mb3_general_ci', 'utf8mb3_unicode_ci', 'utf8mb3_bin'],
  latin1: ['latin1_swedish_ci', 'latin1_general_ci', 'latin1_bin'],
  ascii: ['ascii_general_ci', 'ascii_bin'],
};
export const CHARSETS = Object.keys(COLLATIONS);

/** MariaDB's limits: database names 64 characters, user names 80. */
const LIMITS = { database: { suffix: 32, total: 64 }, user: { suffix: 47, total: 80 } } as const;

/**
 * `<account username>_<suffix>`: the prefix ties every name to its account on a server shared
 * by all (and lets the driver find what the account owns); the suffix keeps to characters that
 * need no quoting anywhere.
 */
export function nameErrors(name: string, username: string, kind: 'database' | 'user', pointer: string): FieldError[] {
  const prefix = `${username}_`;
  const limit = LIMITS[kind];
  if (!name.startsWith(prefix))
    return [{ pointer, code: 'invalid_prefix', detail: `must start with the account's username and an underscore: ${prefix}` }];
  if (!new RegExp(`^[a-z0-9_]{1,${limit.suffix}}$`).test(name.slice(prefix.length)))
    return [{ pointer, code: 'invalid_name', detail: `after ${prefix}: 1-${limit.suffix} characters of a-z, 0-9 and _` }];
  if (name.length > limit.total)
    return [{ pointer, code: 'too_long', detail: `at most ${limit.total} characters in all (MariaDB's limit)` }];
  return [];
}

/** The charset and collation, defaulted and checked against each other. */
export function charsetErrors(charset: string, collation: string): FieldError[] {
  const known = COLLATIONS[charset];
  if (!known) return [{ pointer: '/charset', code: 'unknown_charset', detail: `must be one of ${CHARSETS.join(', ')}` }];
  if (!known.includes(collation))
    return [{ pointer: '/collation', code: 'unknown_collation', detail: `for ${charset}: one of ${known.join(', ')}` }];
  return [];
}

export const defaultCollation = (charset: string): string => COLLATIONS[charset]?.[0] ?? '';

/** At least 12 characters, no control characters, not the user name. */
export function passwordErrors(password: string, username: string): FieldError[] {
  const pointer = '/password';
  if ([...password].length < 12) return [{ pointer, code: 'too_short', detail: 'at least 12 characters' }];
  if (/\p{Cc}/u.test(password)) return [{ pointer, code: 'invalid', detail: 'must not contain control characters' }];
  if (password.toLowerCase().includes(username))
    return [{ pointer, code: 'contains_username', detail: 'must not contain the user name' }];
  return [];
}

/** `ALL` alone, or the named privileges in one order. */
export function privilegeErrors(privileges: string[]): FieldError[] {
  if (privileges.includes('ALL') && privileges.length > 1)
    return [{ pointer: '/privileges', code: 'conflicting', detail: 'ALL stands alone: it includes every other privilege' }];
  return [];
}
export const orderedPrivileges = (privileges: string[]): string[] =>
  privileges.includes('ALL') ? ['ALL'] : PRIVILEGES.filter((p) => privileges.includes(p));
