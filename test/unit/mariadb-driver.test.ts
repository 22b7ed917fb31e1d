import type { AddressInfo, Server } from 'node:net';
import mysql from 'mysql2';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MariaDbDatabaseDriver } from '../../src/provisioning/drivers/mariadb.js';

/**
 * A server that quotes a failed statement in its message, as MariaDB's syntax errors do ("...
 * near '<statement>' at line 1"): the driver's error, which becomes the unit's `sync_error`, must
 * not show the password hash the statement carried. (The real MariaDB of the integration suite
 * is never handed a statement it would refuse so; this server answers the reads with nothing and
 * every write with that error.)
 */
const HASH = `*${'A1'.repeat(20)}`;
let server: ReturnType<typeof mysql.createServer>;
let port: number;

beforeAll(async () => {
  server = mysql.createServer((conn) => {
    conn.serverHandshake({
      protocolVersion: 10,
      serverVersion: '10.11.6-MariaDB',
      connectionId: 1,
      statusFlags: 2,
      characterSet: 33,
      capabilityFlags: 0xffffff,
      authCallback: (_params: unknown, done: (err: null) => void) => done(null),
    });
    const raw = conn as unknown as { stream: { end(): void }; sequenceId: number };
    conn.on('quit', () => raw.stream.end());
    conn.on('error', () => undefined); // a client gone at the end of its apply
    conn.on('query', (sql: string) => {
      raw.sequenceId = 1; // an answer's packets count from 1 after the query's 0
      if (/^\s*SELECT/i.test(sql)) {
        const column = {
          catalog: 'def',
          schema: '',
          table: '',
          orgTable: '',
          orgName: 'name',
          characterSet: 33,
          columnLength: 255,
          columnType: 253,
          flags: 0,
          decimals: 0,
        };
        conn.writeTextResult([], [{ ...column, name: 'name' }]);
      } else
        conn.writeError({
          code: 1064,
          message: `You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '${sql}' at line 1`,
        });
    });
  });
  // mysql2's Server wraps a net.Server: listened on through it, for the host and the callback.
  const listener = (server as unknown as { _server: Server })._server;
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it('a server message that quotes a statement shows no password hash', async () => {
  const driver = new MariaDbDatabaseDriver({
    url: `mysql://berth:x@127.0.0.1:${port}`,
    userHost: '%',
    dumpBin: 'false',
  });
  const spec = {
    prefix: 'alice_',
    databases: [],
    users: [{ username: 'alice_app', passwordHash: HASH, locked: false }],
    grants: [],
  };
  const failure = await driver.applyAccount(spec).then(
    () => null,
    (err: Error) => err.message,
  );
  expect(failure).toContain('IDENTIFIED BY PASSWORD');
  expect(failure).not.toContain(HASH);
  expect(failure).toContain('*<hash>');
});
