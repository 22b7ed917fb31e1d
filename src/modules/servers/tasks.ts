import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { archiveStream, TRANSFER_LEVEL } from '../../archives/pack.js';
import { ArchiveRefused, ArchiveTooLarge, unpackArchive } from '../../archives/unpack.js';
import type { Db, Queryable } from '../../db/client.js';
import { invalid, payloadTooLarge } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { inPieces } from '../../lib/pieces.js';
import type { Clock } from '../../lib/time.js';
import type { AgentTask, AgentUnitSource } from '../../provisioning/agent-units.js';
import { Relay, relays } from './relay.js';
import { findServerById } from './repo.js';
import { agentReachable } from './status.js';
import { wakeAgent } from './wake.js';

interface TaskRow {
  id: string;
  server_id: string;
  spec: AgentTask;
  file: string | null;
  max_bytes: number | null;
  unpack: boolean;
  status: 'pending' | 'done' | 'failed';
  error: string | null;
}

const TASK_COLUMNS = 'id, server_id, spec, file, max_bytes::float8 AS max_bytes, unpack, status, error';

/** The longest a task is waited for; the hourly housekeeping deletes one whose waiter has been gone as long. */
const TASK_TIMEOUT_MS = 30 * 60_000;

/**
 * How long a task is handed out after its waiter last renewed it (each RECHECK_MS). One past it
 * has lost its waiter (a process killed meanwhile): an agent back from an absence, or a control
 * plane restarted, does not dump or pack again for nobody, and its bytes are refused (404).
 * A job's lease, for a task (LEASE_MS in jobs/queue.ts).
 */
const TASK_LEASE_S = 15;

/** The tasks whose agent sends bytes back (`output`), and those it is sent bytes for (`input`). */
const OUTPUTS = new Set<AgentTask['action']>(['database.dump', 'database.checksum', 'site.pack', 'mail.pack']);
const INPUTS = new Set<AgentTask['action']>(['database.load', 'mail.unpack', 'site.receive', 'mail.receive']);

/** The channel a finished task's report is announced on: its payload is the task's id. */
const AGENT_TASKS_CHANNEL = 'berth_agent_tasks';
/** How often a waiting task is looked at without an announcement (a lost LISTEN connection, the server's status). */
const RECHECK_MS = 1000;

/**
 * A task's file here, and how much of it its agent may send (past it: 413, nothing kept). With
 * `unpack`, `file` is a directory: the output, a tar.gz, is unpacked into it as it arrives (at
 * most `maxBytes` of files), never stored whole.
 */
export interface TaskOptions {
  file?: string;
  maxBytes?: number;
  unpack?: boolean;
  timeoutMs?: number;
  /** A pack task's output passed on through it as well; a receive task's input taken from it (relay.ts). */
  relay?: Relay;
}

/** The agent took the task and reported that it could not do it (not: a server away, or too slow). */
export class AgentTaskFailed extends Error {
  constructor(reported: string) {
    super(`the server's agent could not do it: ${reported}`);
  }
}

/**
 * Runs a task on a server through its agent and waits for its report: a dump or a packed site
 * arrives in `file` (this process's), a load reads from it; other tasks have none. Fails with the
 * agent's error, or when the server is not online (its agent would not take the task) or does not
 * finish within `timeoutMs`.
 */
export async function runAgentTask(
  db: Db,
  clock: Clock,
  serverId: string,
  spec: AgentTask,
  { file, maxBytes, unpack = false, timeoutMs = TASK_TIMEOUT_MS, relay }: TaskOptions = {},
): Promise<void> {
  const id = newId('tsk');
  let announced = () => undefined as void;
  const unsubscribe = await db.listen(AGENT_TASKS_CHANNEL, (payload) => payload === id && announced());
  if (relay) relays.set(id, relay);
  try {
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO agent_tasks (id, server_id, spec, file, max_bytes, unpack) VALUES ($1, $2, $3, $4, $5, $6)', [
        id,
        serverId,
        spec,
        file ?? null,
        maxBytes ?? null,
        unpack,
      ]);
      await wakeAgent(tx, serverId);
    });
    for (const deadline = Date.now() + timeoutMs; ;) {
      const renewed = `UPDATE agent_tasks SET alive_at = now() WHERE id = $1 RETURNING ${TASK_COLUMNS}`;
      const row = (await db.query<TaskRow>(renewed, [id])).rows[0];
      if (!row) throw new Error('the task was lost');
      if (row.status === 'done') return;
      if (row.status === 'failed') throw new AgentTaskFailed(row.error ?? '');
      if (relay && INPUTS.has(spec.action) && !relay.wanted) throw new Error('the relayed copy went on without this server');
      const server = await findServerById(db, serverId);
      if (!server || !agentReachable(server, clock.now())) throw new Error('the server is not online');
      if (Date.now() > deadline) throw new Error('the server did not finish in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, RECHECK_MS);
        announced = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    relays.delete(id);
    await unsubscribe();
    await db.query('DELETE FROM agent_tasks WHERE id = $1', [id]);
  }
}

/** Pending, and its waiter alive (renewed within the lease). */
const LIVE = `status = 'pending' AND alive_at > now() - make_interval(secs => ${TASK_LEASE_S})`;

/**
 * A task as a request about it finds it: `foreign` when it is another server's; undefined when it
 * is finished or gone (its runner deleted it), so a report repeated after a lost answer is taken
 * and changes nothing, as a unit's repeated report is. `live`: its waiter is alive, and its bytes
 * are taken and sent (a report is recorded either way: a waiter late to renew still gets it).
 */
const pendingTask = async (db: Queryable, serverId: string, id: string) => {
  const row = (
    await db.query<TaskRow & { live: boolean }>(`SELECT ${TASK_COLUMNS}, ${LIVE} AS live FROM agent_tasks WHERE id = $1`, [id])
  ).rows[0];
  if (row && row.server_id !== serverId) return 'foreign' as const;
  return row?.status === 'pending' ? row : undefined;
};

/**
 * Passes the output's bytes up to `max` (null: any), then fails with a 413. An archive may hold
 * `max` bytes of files and exceed it by what packing adds (tar's headers, gzip's blocks of
 * incompressible data): 1 % and 1 MiB; the unpack checks the files against `max` itself.
 */
const bounded = (max: number | null) => {
  const allowed = max === null ? Number.POSITIVE_INFINITY : max + Math.ceil(max / 100) + 2 ** 20;
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > allowed) done(payloadTooLarge(`The task's output exceeds ${allowed} bytes.`, allowed));
      else done(null, chunk);
    },
  });
};

/**
 * An archive the agent sends, unpacked into `dir` as it arrives, bounded as a stored output is
 * (past it: 413) and by its files' bytes (413 too); what the unpacking refuses is the agent's 422.
 * A relay passes the bytes on to another server's agent as well.
 */
async function unpackOutput(body: Readable, dir: string, maxBytes: number | null, relay?: Relay): Promise<void> {
  const bytes = maxBytes ?? Number.POSITIVE_INFINITY;
  const limited = body.pipe(bounded(maxBytes));
  const input = relay ? limited.pipe(relay.tee()) : limited;
  if (relay) limited.on('error', (err) => input.destroy(err));
  // An upload cut off half-way (the agent's connection lost) ends the unpacking, which removes `dir`.
  body.on('error', (err) => input.destroy(err));
  await unpackArchive({ stream: input }, 'tar.gz', dir, {
    bytes,
    ratio: Number.POSITIVE_INFINITY,
  }).catch((err: unknown) => {
    relay?.drop('the copy from the sending server failed');
    if (err instanceof ArchiveTooLarge) throw payloadTooLarge(`The task's files exceed ${bytes} bytes.`, bytes);
    if (err instanceof ArchiveRefused)
      throw invalid([{ pointer: '', code: err.code, detail: err.detail }], `The task's archive was refused: ${err.detail}.`);
    throw err;
  });
}

/** The tasks of the server `$1` still to hand out: pending, with a waiter. */
const HANDED_OUT = `FROM agent_tasks WHERE server_id = $1 AND ${LIVE}`;

/** Tasks as the agent listener hands them out and takes their bytes and reports. */
export const taskUnits: AgentUnitSource = {
  kind: 'task',
  waiting: `EXISTS (SELECT 1 ${HANDED_OUT})`,
  async pending(db, serverId) {
    const rows = await db.query<TaskRow>(`SELECT id, spec ${HANDED_OUT} ORDER BY id`, [serverId]);
    return rows.rows.map((r) => ({ kind: 'task' as const, key: r.id, generation: 1, spec: r.spec }));
  },
  async report(db, serverId, report) {
    const task = await pendingTask(db, serverId, report.key);
    if (task === 'foreign') return 'foreign';
    if (report.generation > 1) return 'future';
    if (task) {
      const status = report.error === undefined ? 'done' : 'failed';
      await db.query('UPDATE agent_tasks SET status = $2, error = $3 WHERE id = $1', [task.id, status, report.error ?? null]);
      // Delivered when the reports' transaction commits.
      await db.query('SELECT pg_notify($1, $2)', [AGENT_TASKS_CHANNEL, task.id]);
    }
    return 'recorded';
  },
  /**
   * A task's input: what its relay passes on, the file the task names, or the directory it names
   * packed (only its `only` names, if given).
   */
  async artifact(db, serverId, key, name) {
    const task = await pendingTask(db, serverId, key);
    if (task === 'foreign') return 'foreign';
    if (!task?.live || name !== 'input' || !INPUTS.has(task.spec.action)) return undefined;
    const relay = relays.get(key);
    if (relay) return relay.take();
    if (!task.file) return undefined;
    const found = await stat(task.file).catch(() => null);
    if (!found?.isDirectory()) return found ? createReadStream(task.file) : undefined;
    const only = 'only' in task.spec && task.spec.only ? new Set(task.spec.only) : undefined;
    return archiveStream(task.file, [{ dir: task.file, as: '' }], { only, level: TRANSFER_LEVEL });
  },
  /** A task's output, unpacked as it comes, or written beside the file and renamed onto it once complete; passed on through its relay as well. */
  async receive(db, serverId, key, name, body) {
    const task = await pendingTask(db, serverId, key);
    if (task === 'foreign') return 'foreign';
    if (!task?.live || !task.file || name !== 'output' || !OUTPUTS.has(task.spec.action)) return undefined;
    if (task.unpack) {
      await unpackOutput(body, task.file, task.max_bytes, relays.get(key));
      return 'stored';
    }
    const partial = `${task.file}.partial`;
    const relay = relays.get(key);
    try {
      const [limit, pieces, out] = [bounded(task.max_bytes), inPieces(2 ** 20), createWriteStream(partial, { mode: 0o600 })];
      await (relay ? pipeline(body, limit, pieces, relay.tee(), out) : pipeline(body, limit, pieces, out));
      await rename(partial, task.file);
    } catch (err) {
      relay?.drop('the output from the sending server failed');
      throw err;
    } finally {
      await rm(partial, { force: true });
    }
    return 'stored';
  },
};

/**
 * A task's output brought here (`send.options.file`) and, as it arrives, passed on as the input
 * of a task on another server (relay.ts): one pass through the control plane. Returns whether the
 * receiving task took it all; should it fail or fall behind, the output here still completes.
 */
export async function relayedTask(
  deps: { db: Db; clock: Clock },
  send: { serverId: string; spec: AgentTask; options: TaskOptions },
  receive: { serverId: string; spec: AgentTask },
): Promise<boolean> {
  const relay = new Relay();
  const receiving = runAgentTask(deps.db, deps.clock, receive.serverId, receive.spec, { relay });
  receiving.catch(() => relay.drop('the receiving server failed'));
  try {
    await runAgentTask(deps.db, deps.clock, send.serverId, send.spec, { ...send.options, relay });
  } catch (err) {
    relay.drop('the output from the sending server failed');
    await receiving.catch(() => undefined);
    throw err;
  }
  return receiving.then(
    () => true,
    () => false,
  );
}

/** Deletes the tasks whose waiter has been gone as long as the longest wait. */
export const pruneStaleTasks = (db: Queryable) =>
  db.query('DELETE FROM agent_tasks WHERE alive_at < now() - make_interval(secs => $1)', [TASK_TIMEOUT_MS / 1000]);
