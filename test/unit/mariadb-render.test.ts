import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { changedTables, differingTables } from '../../src/modules/databases/backup.js';
import {
  nativePasswordHash,
  grantTarget,
  quoteName,
  quoteString,
  renderDatabaseState,
  sql,
  userAt,
} from '../../src/provisioning/render/mariadb.js';

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
        maxUserConnections: 20,
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
    const user = { username: 'alice_app', passwordHash: nativePasswordHash('x'), locked: false };
    for (const bad of [0, 1.5, 10_001, Number.NaN])
      expect(() => sql.alterUser(user, '%', bad)).toThrow(/unsafe connection limit/);
    // A spec from before the limit leaves the server's as it is.
    expect(sql.alterUser(user, '%')).not.toContain('MAX_USER_CONNECTIONS');
  });

  it('make the user of a load at the administrative account’s host, a network with its mask among them', () => {
    const hash = nativePasswordHash('x');
    expect(sql.createLoader('_berth_load_ab_01', '127.0.0.0/255.0.0.0', hash)).toBe(
      `CREATE USER '_berth_load_ab_01'@'127.0.0.0/255.0.0.0' IDENTIFIED BY PASSWORD '${hash}'`,
    );
    expect(sql.grantSetUser('_berth_load_ab_01', '%')).toBe("GRANT SET USER ON *.* TO '_berth_load_ab_01'@'%'");
    expect(() => sql.grantSetUser('_berth_load_ab_01', "%'@'x")).toThrow(/unsafe host/);
  });

  it('quote a table’s name whole, whatever the account named it', () => {
    expect(sql.checksumTable('alice_shop', 'wp_posts')).toBe('CHECKSUM TABLE `alice_shop`.`wp_posts`');
    expect(sql.checksumTable('alice_shop', 'a`b.c; DROP')).toBe('CHECKSUM TABLE `alice_shop`.`a``b.c; DROP`');
    expect(sql.showCreate('TRIGGER', 'alice_shop', 'a`b')).toBe('SHOW CREATE TRIGGER `alice_shop`.`a``b`');
    expect(sql.dropTable('alice_shop', 'a`b')).toBe('DROP TABLE IF EXISTS `alice_shop`.`a``b`');
    // An option's value is taken whole: a name that starts with `-` or holds a dot stays a name.
    expect(sql.ignoreTable('alice_shop', '--all.x')).toBe('--ignore-table=alice_shop.--all.x');
    for (const bad of ['', 'a\0b', 'x'.repeat(65)]) {
      expect(() => sql.checksumTable('alice_shop', bad), bad).toThrow(/unsafe object name/);
      expect(() => sql.ignoreTable('alice_shop', bad), bad).toThrow(/unsafe table name/);
    }
    expect(() => sql.checksumTable('alice`x', 't')).toThrow(/unsafe name/);
    expect(() => sql.ignoreTable('-alice', 't')).toThrow(/unsafe name/);
  });
});

describe('a move’s table checksums', () => {
  const sums = (tables: Record<string, string | null>, version = '10.11.19-MariaDB') => ({ version, tables });

  it('name each table whose checksum differs, or that one side lacks, by its own name', () => {
    expect(differingTables(sums({ a: '1', b: null }), sums({ b: null, a: '1' }))).toEqual([]);
    expect(differingTables(sums({ a: '1', b: '2', c: '3' }), sums({ a: '1', b: '9', d: '4' }))).toEqual(['b', 'c', 'd']);
    expect(differingTables(sums({ a: '1' }), sums({ a: null }))).toEqual(['a']);
    // Names that are an object's inherited keys are tables as any other (as JSON.parse gives them).
    const odd = JSON.parse('{"__proto__": "1", "constructor": "2"}') as Record<string, string>;
    expect(differingTables(sums(odd), sums({}))).toEqual(['__proto__', 'constructor']);
    expect(differingTables(sums(odd), sums(JSON.parse('{"constructor": "2", "__proto__": "1"}')))).toEqual([]);
  });

  it('between servers of different versions, compare only which tables there are', () => {
    expect(differingTables(sums({ a: '1', b: '2' }), sums({ a: '5', b: '2' }, '11.4.2-MariaDB'))).toEqual([]);
    expect(differingTables(sums({ a: '1', b: '2' }), sums({ a: '5' }, '11.4.2-MariaDB'))).toEqual(['b']);
  });

  describe('what a move’s final copy dumps of a database its target already holds a copy of', () => {
    const OBJECTS = 'a'.repeat(64);
    const fingerprint = (tables: Record<string, [string | null, string]>, o: { version?: string; objects?: string } = {}) => ({
      version: o.version ?? '10.11.19-MariaDB',
      tables: Object.fromEntries(Object.entries(tables).map(([t, [sum]]) => [t, sum])),
      definitions: Object.fromEntries(Object.entries(tables).map(([t, [, definition]]) => [t, definition.repeat(64)])),
      views: ['v'],
      objects: 'objects' in o ? o.objects : OBJECTS,
    });

    it('the tables whose rows or definition differ or that the target lacks; the rest and the views left out; what the source lacks dropped', () => {
      const source = fingerprint({
        same: ['1', 'a'],
        rows: ['2', 'a'],
        altered: ['3', 'a'],
        added: ['4', 'a'],
        unsummed: [null, 'a'],
      });
      const target = fingerprint({
        same: ['1', 'a'],
        rows: ['9', 'a'],
        altered: ['3', 'b'],
        gone: ['5', 'a'],
        unsummed: [null, 'a'],
      });
      expect(changedTables(source, target)).toEqual({
        changed: ['added', 'altered', 'rows', 'unsummed'],
        except: ['same', 'v'],
        drop: ['gone'],
      });
      // A table without a checksum is never taken for the same.
      expect(changedTables(source, source)).toEqual({
        changed: ['unsummed'],
        except: ['added', 'altered', 'rows', 'same', 'v'],
        drop: [],
      });
    });

    it('a whole dump where the versions, the views, routines or events differ, or a side does not describe them', () => {
      const source = fingerprint({ t: ['1', 'a'] });
      expect(changedTables(source, fingerprint({ t: ['1', 'a'] }, { version: '11.4.2-MariaDB' }))).toBeNull();
      expect(changedTables(source, fingerprint({ t: ['1', 'a'] }, { objects: 'b'.repeat(64) }))).toBeNull();
      expect(
        changedTables(
          fingerprint({ t: ['1', 'a'] }, { objects: undefined }),
          fingerprint({ t: ['1', 'a'] }, { objects: undefined }),
        ),
      ).toBeNull();
      expect(changedTables(source, { version: source.version, tables: { t: '1' } })).toBeNull();
    });
  });
});
