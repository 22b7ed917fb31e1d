import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/db/client.js';
import { pendingOf } from '../../src/modules/servers/pending-units.js';
import type { AgentUnit, AgentUnitSource } from '../../src/provisioning/agent-units.js';

/** A source of one table's rows of the server `$1`, answering `waiting` from the same table (or as `waiting` says). */
const source = (
  kind: AgentUnitSource['kind'],
  table: string,
  asked: string[],
  waiting = `EXISTS (SELECT 1 FROM ${table} WHERE server_id = $1)`,
): AgentUnitSource => ({
  kind,
  waiting,
  async pending(db, serverId) {
    asked.push(kind);
    const rows = await db.query<{ key: string }>(`SELECT key FROM ${table} WHERE server_id = $1 ORDER BY key`, [serverId]);
    return rows.rows.map((r) => ({ kind, key: r.key, generation: 1, spec: {} }) as unknown as AgentUnit);
  },
  report: async () => 'recorded',
});

describe("a server's pending units", () => {
  let db: Db;
  const statements: string[] = [];
  const counted = {
    query: ((text: string, params?: unknown[]) => {
      statements.push(text);
      return db.query(text, params);
    }) as Db['query'],
  };
  beforeAll(async () => {
    db = await openDb({ databaseUrl: null, dataDir: '', inMemory: true });
    for (const t of ['withdrawals_t', 'tasks_t', 'plain_t'])
      await db.query(`CREATE TABLE ${t} (server_id text NOT NULL, key text NOT NULL)`);
  });
  afterAll(() => db.close());

  it('asks every source with nothing pending in one statement, and none of them for its units', async () => {
    const asked: string[] = [];
    const pending = pendingOf(counted, [source('withdrawal', 'withdrawals_t', asked), source('task', 'tasks_t', asked)]);
    statements.length = 0;
    expect(await pending('srv_a')).toEqual([]);
    expect(statements).toHaveLength(1);
    expect(asked).toEqual([]);
  });

  it('asks for their units only the sources that say they have some, in the sources’ order', async () => {
    await db.query(`INSERT INTO tasks_t VALUES ('srv_a', 't1'), ('srv_b', 't2')`);
    await db.query(`INSERT INTO withdrawals_t VALUES ('srv_a', 'w1')`);
    const asked: string[] = [];
    const pending = pendingOf(counted, [
      source('withdrawal', 'withdrawals_t', asked),
      source('forward', 'plain_t', asked, 'true'),
      source('task', 'tasks_t', asked),
    ]);
    expect((await pending('srv_a')).map((u) => u.key)).toEqual(['w1', 't1']);
    expect(asked).toEqual(['withdrawal', 'forward', 'task']);
    asked.length = 0;
    expect((await pending('srv_b')).map((u) => u.key)).toEqual(['t2']);
    expect(asked).toEqual(['forward', 'task']);
  });
});
