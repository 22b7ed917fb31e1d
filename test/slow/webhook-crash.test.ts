import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/db/client.js';
import { createTestApp, eventually, OPERATOR_TOKEN, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/db.js';
import { freePort } from '../helpers/ports.js';
import { startReceiver } from '../helpers/receiver.js';
import { testDir } from '../helpers/temp-dir.js';

/** A webhook delivery cut off by a crash of the real server process, taken over after the restart. */
const ENV = { BERTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1', BERTH_WEBHOOK_RELAY_MS: '50' };

const deliveriesOf = async (t: TestApp, webhookId: string) => (await t.get(`/v1/webhooks/${webhookId}/deliveries`)).body.data;

// The server keeps PGlite in its data directory whatever the run: the slow suite's PostgreSQL
// run would only repeat it.
describe.skipIf(onPostgres())('restart', () => {
  const root = path.resolve(import.meta.dirname, '../..');
  it('a delivery cut off by a crash is delivered after the restart (at least once, same webhook-id)', async () => {
    const dataDir = testDir('webhook-restart');
    const rx = await startReceiver();
    rx.behave('hang');
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/server.ts')], {
      cwd: root,
      env: {
        ...process.env,
        ...ENV,
        DATABASE_URL: '',
        BERTH_DATA_DIR: dataDir,
        BERTH_PORT: String(port),
        BERTH_BOOTSTRAP_TOKEN: OPERATOR_TOKEN,
        BERTH_SECRET_KEY: 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=',
        BERTH_LOG_LEVEL: 'silent',
      },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const api = (p: string, body?: unknown) =>
      fetch(`http://127.0.0.1:${port}${p}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    // A first start (PGlite initdb, migrations) can take 20 s and more on a loaded machine.
    await eventually(async () => (await api('/readyz').catch(() => null))?.ok, 90_000);
    const hook = (await (await api('/v1/webhooks', { url: rx.url('/crash'), event_types: ['*'] })).json()) as { id: string };
    expect((await api(`/v1/webhooks/${hook.id}/test`, {})).status).toBe(202);
    await eventually(async () => rx.received.length === 1);
    child.kill('SIGKILL');
    await exited;

    rx.behave({ status: 200 });
    const db = await openDb({ databaseUrl: null, dataDir });
    const t = await createTestApp({ db, dataDir, env: ENV });
    try {
      const [stuck] = await deliveriesOf(t, hook.id);
      expect(stuck).toMatchObject({ status: 'sending', attempt_count: 0 });
      // The dead worker's lease runs out; then the delivery is taken over.
      t.clock.advance(61_000);
      const done = await eventually(async () => {
        const [row] = await deliveriesOf(t, hook.id);
        return row?.status === 'succeeded' ? row : null;
      });
      expect(done.attempt_count).toBe(1);
      expect(rx.received).toHaveLength(2);
      expect(rx.received[1]?.headers['webhook-id']).toBe(rx.received[0]?.headers['webhook-id']);
    } finally {
      await t.close();
      await db.close();
      await rx.close();
    }
  }, 120_000);
});
