import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nativePasswordHash } from '../../src/modules/databases/rules.js';
import { grantTarget, quoteName, quoteString, renderDatabaseState, sql, userAt } from '../../src/provisioning/render/mariadb.js';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../fixtures/db', name), 'utf8');

describe('MariaDB statements', () => {
  it('render an account’s databases, users and grants (golden file)', () => {
    const text = renderDatabaseState(
      {
        prefix: 'alice_',
        databases: [
          { name: 'alice_shop', charset: 'utf8mb4', collation: 'utf8mb4_unicode_ci' },
          { name: 'alice_blog', charset: 'latin1', collation: 'latin1_swedish_ci' },
        ],
        users: [
          { username: 'alice_app', passwordHash: nativePasswordHash('a long enough passphrase'), locked: false },
          { username: 'alice_ro', passwordHash: nativePasswordHash('another long passphrase'), locked: true },
        ],
        grants: [
          { database: 'alice_shop', username: 'alice_app', privileges: ['ALL'] },
          { database: 'alice_shop', username: 'alice_ro', privileges: ['SELECT', 'LOCK_TABLES', 'SHOW_VIEW'] },
        ],
      },
      '%',
    );
    expect(text).toBe(fixture('account.sql'));
  });

  it('hash passwords as mysql_native_password does (the value MariaDB’s PASSWORD() gives)', () => {
    // SELECT PASSWORD('password') on MariaDB.
    expect(nativePasswordHash('password')).toBe('*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19');
  });

  it('escape the grant wildcards and refuse what could break out of a quote', () => {
    expect(grantTarget('alice_shop_2')).toBe('`alice\\_shop\\_2`.*');
    expect(quoteString("it's \\ fine")).toBe("'it\\'s \\\\ fine'");
    for (const bad of ['a`b', 'a b', "a'b", 'A', '', 'x'.repeat(81), 'a;DROP'])
      expect(() => quoteName(bad), bad).toThrow(/unsafe/);
    expect(() => userAt('alice_app', "%' OR 1")).toThrow(/unsafe host/);
    expect(() => sql.grant('alice_shop', 'alice_app', '%', ['SELECT; DROP'])).toThrow(/unsafe privilege/);
    expect(() => sql.createUser({ username: 'alice_app', passwordHash: "*' OR 1", locked: false }, '%')).toThrow(
      /unsafe password hash/,
    );
    expect(() => sql.createDatabase({ name: 'alice_x', charset: 'utf8mb4', collation: 'x; DROP' })).toThrow(/unsafe collation/);
  });
});
