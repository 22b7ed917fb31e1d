import net from 'node:net';
import { Readable, type Writable } from 'node:stream';
import { expect, it, onTestFinished } from 'vitest';
import { agentUpload } from '../../src/agent/client.js';
import { runTask } from '../../src/agent/task.js';
import type { CronDriver, DatabaseDriver } from '../../src/provisioning/driver.js';

/**
 * A driver whose dump writes for as long as its output takes it, as `mariadb-dump` does: it ends
 * only when that output closes (the real driver kills the tool then).
 */
function endlessDump(): { database: DatabaseDriver; ended: Promise<void> } {
  let ended!: () => void;
  const database = {
    dump: (_name: string, out: Writable) =>
      new Promise<void>((_resolve, reject) => {
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const write = () => {
          while (!out.destroyed && out.write(chunk));
        };
        out.on('drain', write);
        out.on('close', () => {
          ended();
          reject(new Error('the dump was cut off'));
        });
        write();
      }),
  } as unknown as DatabaseDriver;
  return { database, ended: new Promise<void>((resolve) => (ended = resolve)) };
}

it('a dump whose upload fails (the control plane gone mid-body) is ended, not left waiting on a full pipe with its transaction open', async () => {
  // A listener that takes the first bytes and then resets the connection, as a killed process's does.
  const server = net.createServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => void server.close());
  const { port } = server.address() as net.AddressInfo;
  const { database, ended } = endlessDump();
  const deps = {
    dataDir: '/nonexistent',
    database,
    cron: {} as CronDriver,
    input: () => Promise.resolve(Readable.from([])),
    output: (body: Readable) => agentUpload(`https://127.0.0.1:${port}/`, { ca_pem: '' }, '/output', body),
  };
  await expect(runTask(deps, 'tsk_1', { action: 'database.dump', database: 'shop_wp' })).rejects.toThrow();
  await ended;
});
