import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, Queryable } from '../../src/db/client.js';
import { loadMailUnit, mailUnits } from '../../src/modules/mail/unit.js';
import { LOCAL_SERVER_ID } from '../../src/modules/servers/index.js';
import { loadWebUnit, recordMeasuredBytes, webUnits } from '../../src/modules/sites/repo.js';
import { createTestApp, eventually, type Response, type TestApp } from '../helpers/app.js';
import { freshDb, onPostgres } from '../helpers/db.js';
import { createAccount, createAccountOnNewPlan, createPlan } from '../helpers/fixtures.js';

/**
 * An apply being recorded (an agent's report, or the in-process apply: the unit read as
 * committed, then marked applied) and the writers of what the unit holds take their row locks in
 * one order, the owner's before the unit's: in the other, PostgreSQL aborts one of them as a
 * deadlock's victim (a 503 for the client, a report refused for the agent). Each test stops one
 * side after a statement while the other runs into its locks, then lets it go on: both must
 * complete. PGlite is one session: there is nothing to order.
 */
let t: TestApp;
let database: Awaited<ReturnType<typeof freshDb>>;
let accountId: string;
/** The next transaction of the app that runs a statement matching `at` stops after it until `meanwhile` resolves. */
let stop: { at: RegExp; meanwhile: () => Promise<unknown> } | null = null;

/**
 * `tx`, whose first statement that `at` picks (by its text and its number, from 1) is followed by
 * a wait for `meanwhile`; `statements()` counts those run.
 */
function pausing(tx: Queryable, at: (text: string, n: number) => boolean, meanwhile: () => Promise<unknown>) {
  let statements = 0;
  let paused = false;
  const query: Queryable['query'] = async (text, params) => {
    const r = await tx.query(text, params);
    statements++;
    if (!paused && at(text, statements)) {
      paused = true;
      await meanwhile();
    }
    return r as never;
  };
  return { tx: { kind: tx.kind, query }, statements: () => statements };
}

/** `db`, whose transactions' statements can be stopped after (see `stop`). */
function stoppable(db: Db): Db {
  const transaction: Db['transaction'] = (fn) =>
    db.transaction((tx) => {
      let taken: (() => Promise<unknown>) | undefined;
      const at = (text: string) => {
        if (!stop?.at.test(text)) return false;
        taken = stop.meanwhile;
        stop = null;
        return true;
      };
      return fn(pausing(tx, at, () => taken!()).tx);
    });
  return new Proxy(db, {
    get: (target, prop) => {
      if (prop === 'transaction') return transaction;
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

beforeAll(async () => {
  if (!onPostgres()) return;
  database = await freshDb();
  t = await createTestApp({ db: stoppable(database.db) });
  const plan = await createPlan(t, undefined, { max_domains: 50, max_email_accounts: 50 });
  accountId = (await createAccount(t, plan.id)).id;
});
afterAll(async () => {
  await t?.close();
  await database?.db.close();
  await database?.drop();
});

/** Some session of this database waits for a row's lock (not an advisory one: the jobs' locks). */
const someoneWaits = async () =>
  (
    await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE NOT l.granted AND l.locktype IN ('transactionid', 'tuple') AND a.datname = current_database()`,
    )
  ).rows[0]!.n > 0;

/** Starts `work`; resolves once it waits for a lock or has ended, with what it will come to. */
async function runIntoLocks<T>(work: () => Promise<T>): Promise<{ outcome: Promise<T> }> {
  let ended = false;
  const outcome = work().finally(() => (ended = true));
  outcome.catch(() => undefined);
  await eventually(async () => ended || (await someoneWaits()));
  return { outcome };
}

/** A mail domain with a mailbox: its unit has a row. */
async function mailDomain(name: string): Promise<string> {
  const domain = await t.post('/v1/domains', { account_id: accountId, name, mail_enabled: true });
  expect(domain.status, domain.text).toBe(201);
  const box = await t.post('/v1/emails', { address: `info@${name}`, password: 'a long enough passphrase', quota_mb: 10 });
  expect(box.status, box.text).toBe(201);
  return domain.body.id;
}

const MAIL_STATEMENTS = 5;

/** Records an apply of the domain's mail unit, stopping after its statement `stopAfter` until `meanwhile` resolves. */
async function recordMailApplied(domainId: string, stopAfter: number, meanwhile: () => Promise<unknown>): Promise<void> {
  await t.db.transaction(async (tx) => {
    const stopping = pausing(tx, (_, n) => n === stopAfter, meanwhile);
    const unit = await loadMailUnit(stopping.tx, domainId);
    await mailUnits.marks(stopping.tx, domainId).applied(unit!.generation);
    expect(stopping.statements()).toBe(MAIL_STATEMENTS);
  });
}

/** The answer to `write`, started while the recording of the domain's mail apply is stopped after its statement `stopAfter`. */
async function writtenWhileRecording(domainId: string, stopAfter: number, write: () => Promise<Response>): Promise<Response> {
  let written: Promise<Response> | undefined;
  await recordMailApplied(domainId, stopAfter, async () => {
    written = (await runIntoLocks(write)).outcome;
  });
  return written!;
}

describe.skipIf(!onPostgres())('the order of row locks (PostgreSQL only: PGlite is one session)', () => {
  for (let stopAfter = 1; stopAfter <= MAIL_STATEMENTS; stopAfter++) {
    it(`a domain deleted with its mail while a mail apply's recording stops after its statement ${stopAfter}`, async () => {
      const name = `gone-${stopAfter}.example.com`;
      const id = await mailDomain(name);
      const deleted = await writtenWhileRecording(id, stopAfter, () => t.request('DELETE', `/v1/domains/${name}?cascade=true`));
      expect(deleted.status, deleted.text).toBe(204);
    });

    it(`a mailbox added while a mail apply's recording stops after its statement ${stopAfter}`, async () => {
      const name = `added-${stopAfter}.example.com`;
      const id = await mailDomain(name);
      const added = await writtenWhileRecording(id, stopAfter, () =>
        t.post('/v1/emails', { address: `sales@${name}`, password: 'a long enough passphrase', quota_mb: 10 }),
      );
      expect(added.status, added.text).toBe(201);
    });
  }

  // The suspension has changed the account and goes on to its sites when the recording reads the site.
  it('an account suspended while its site’s apply is recorded', async () => {
    const account = (await createAccountOnNewPlan(t)).id;
    const name = 'suspended.example.com';
    expect((await t.post('/v1/domains', { account_id: account, name })).status).toBe(201);
    const site = await t.post('/v1/sites', { account_id: account, hostname: name });
    expect(site.status, site.text).toBe(202);
    let recorded: Promise<void> | undefined;
    stop = {
      at: /^UPDATE accounts SET status/,
      meanwhile: async () => {
        const record = () =>
          t.db.transaction(async (tx) => {
            const unit = await loadWebUnit(tx, site.body.id);
            await webUnits.marks(tx, site.body.id).applied(unit!.generation);
          });
        recorded = (await runIntoLocks(record)).outcome;
      },
    };
    const suspended = await t.post(`/v1/accounts/${account}/suspend`, { reason: 'unpaid invoice' });
    expect(suspended.status, suspended.text).toBe(200);
    await recorded;
  });

  // A plan's change renders its accounts' units table by table in the order an account's own
  // change and a suspension do (sites, databases, SSH): in another, two of them would hold each
  // other's rows. Each account's change stops after the first of its units' statements.
  const firstUnit = /^UPDATE (sites s|ssh_units u) SET generation/;
  /** An account on a plan (PHP workers 3, SFTP) with a site and SSH access: units of both kinds. */
  async function accountWithUnits(name: string) {
    const plan = (await createPlan(t, undefined, { features: [], ssh_access: 'sftp', php_workers: 3 })).id;
    const account = (await createAccount(t, plan)).id;
    expect((await t.post('/v1/domains', { account_id: account, name })).status).toBe(201);
    expect((await t.post('/v1/sites', { account_id: account, hostname: name })).status).toBe(202);
    const ssh = await t.put(`/v1/accounts/${account}/ssh`, { access: 'sftp' });
    expect(ssh.status, ssh.text).toBe(200);
    return { plan, account };
  }
  /** `write`, with the plan's PHP workers and SSH access changed while it stops after its first unit's statement. */
  async function whilePlanChanges(plan: string, write: () => Promise<Response>): Promise<[Response, Response]> {
    let changed: Promise<Response> | undefined;
    stop = {
      at: firstUnit,
      meanwhile: async () => {
        const change = () => t.patch(`/v1/plans/${plan}`, { ssh_access: 'shell', php_workers: 4 });
        changed = (await runIntoLocks(change)).outcome;
      },
    };
    const written = await write();
    return [written, await changed!];
  }

  it('a plan whose PHP workers and SSH access change while one of its accounts is suspended', async () => {
    const { plan, account } = await accountWithUnits('plan-suspended.example.com');
    const [suspended, patched] = await whilePlanChanges(plan, () =>
      t.post(`/v1/accounts/${account}/suspend`, { reason: 'unpaid invoice' }),
    );
    expect(suspended.status, suspended.text).toBe(200);
    expect(patched.status, patched.text).toBe(200);
  });

  it('a plan whose PHP workers and SSH access change while one of its accounts moves to another plan', async () => {
    const { plan, account } = await accountWithUnits('plan-left.example.com');
    const other = (await createPlan(t, undefined, { features: [], ssh_access: 'shell', php_workers: 5 })).id;
    const [moved, patched] = await whilePlanChanges(plan, () => t.patch(`/v1/accounts/${account}`, { plan_id: other }));
    expect(moved.status, moved.text).toBe(200);
    expect(patched.status, patched.text).toBe(200);
  });

  // A writer of several sites (a suspension) and a measurement of several would otherwise lock
  // them in orders of their own.
  it('a measurement passes over a site being written, which keeps its last measurement until the next', async () => {
    // No certificate (the plan has no `ssl`) and provisioned: nothing else writes the sites meanwhile.
    const account = (await createAccount(t, (await createPlan(t, undefined, { features: [] })).id)).id;
    const ids: string[] = [];
    for (const name of ['measured-1.example.com', 'measured-2.example.com']) {
      expect((await t.post('/v1/domains', { account_id: account, name })).status).toBe(201);
      ids.push((await t.post('/v1/sites', { account_id: account, hostname: name })).body.id);
    }
    for (const id of ids) await eventually(async () => (await t.get(`/v1/sites/${id}`)).body.status === 'active');
    const [written, free] = ids as [string, string];
    const bytes = async () =>
      new Map(
        (
          await t.db.query<{ id: string; measured_bytes: number | null }>(
            'SELECT id, measured_bytes::float8 AS measured_bytes FROM sites WHERE id = ANY($1)',
            [ids],
          )
        ).rows.map((r) => [r.id, r.measured_bytes]),
      );
    const measure = (n: number) =>
      recordMeasuredBytes(
        t.db,
        LOCAL_SERVER_ID,
        ids.map((key) => ({ key, bytes: n })),
      );
    const before = (await bytes()).get(written);
    let release = () => {};
    let writing: Promise<void> | undefined;
    await new Promise<void>((locked) => {
      writing = t.db.transaction(async (tx) => {
        await tx.query('SELECT 1 FROM sites WHERE id = $1 FOR UPDATE', [written]);
        locked();
        await new Promise<void>((resolve) => (release = resolve));
      });
    });
    // Were the measurement to wait for the lock, it would wait until the lock goes, after it.
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('the measurement waited for the lock')), 20_000);
    });
    try {
      await Promise.race([measure(1000), waited]);
      expect(await bytes()).toEqual(
        new Map([
          [free, 1000],
          [written, before],
        ]),
      );
    } finally {
      clearTimeout(timer);
      release();
      await writing;
    }
    await measure(2000);
    expect(await bytes()).toEqual(new Map(ids.map((id) => [id, 2000])));
  });
});
