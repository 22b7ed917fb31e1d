import { randomBytes } from 'node:crypto';
import { type Caller, requireKind, requireWritable } from '../../auth/caller.js';
import { hashSecret } from '../../auth/secret.js';
import type { Queryable } from '../../db/client.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.js';
import type { PageParams } from '../../db/paging.js';
import { conflict, invalid, notFound, serverNotEmpty } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkVersion, staleVersion } from '../../lib/if-match.js';
import { mergeFields } from '../../lib/merge-patch.js';
import type { ServiceDeps } from '../deps.js';
import { publishEvent } from '../publishing/index.js';
import { addressesOf, type ServerAddresses } from './addresses.js';
import * as repo from './repo.js';
import { diskUsedOn } from './room.js';
import type { CreateServer, Enrolment, Server, ServerFields, ServerListQuery, ServerWithEnrolment } from './schemas.js';
import { serverStatus, serverTimeZone, statusCondition } from './status.js';

const ENROLMENT_LIFETIME_MS = 60 * 60_000;
const NOTHING: repo.ServerCounts = { accounts: 0, in_sync: 0, pending: 0, error: 0 };

/** What the modules that place work on servers tell about them (app.ts hands these in). */
export interface ServerHooks {
  /** Each module's oldest unit still to apply, per server. */
  oldestPending: ((db: Queryable, serverIds: string[]) => Promise<Map<string, string>>)[];
  /** In the transaction that changes a server's addresses, with those it had: what points at them. */
  addressesChanged?: ((tx: Queryable, serverId: string, had: ServerAddresses) => Promise<void>)[];
}

/** What the enrolment command needs from the agent listener: its URL and its CA's fingerprint. */
export interface AgentEndpoint {
  url: () => string;
  caFingerprint: () => Promise<string>;
}

const fieldsOf = (r: repo.ServerRow): ServerFields => ({
  name: r.name,
  roles: r.roles,
  ipv4: r.ipv4,
  ipv6: r.ipv6,
  capacity: { accounts: r.capacity_accounts, disk_bytes: r.capacity_disk_bytes === null ? null : Number(r.capacity_disk_bytes) },
  placement: r.placement,
});

/** A one-use secret: 256 random bits, stored as its SHA-256 only. */
const enrolmentSecret = () => `berth_enrol_${randomBytes(32).toString('base64url')}`;

export function serversService(deps: ServiceDeps, hooks: ServerHooks, agent: AgentEndpoint | null) {
  const { db, clock, config } = deps;

  const accountsOn = async (id: string) => (await repo.serverCounts(db, [id])).get(id)?.accounts ?? 0;

  /** The servers as the API shows them, read through `q` (the transaction of an event, if any): a few queries a page. */
  async function showAll(rows: repo.ServerRow[], q: Queryable = db): Promise<Server[]> {
    const ids = rows.map((row) => row.id);
    const [counts, disks] = await Promise.all([
      repo.serverCounts(q, ids),
      Promise.all(rows.map((row) => diskUsedOn(row, config.dataDir))),
    ]);
    // Only where units wait (a pending or failed unit keeps its `pending_since`).
    const waiting = ids.filter((id) => {
      const c = counts.get(id);
      return c !== undefined && c.pending + c.error > 0;
    });
    const oldest = waiting.length ? await Promise.all(hooks.oldestPending.map((of) => of(q, waiting))) : [];
    return rows.map((row, i) => {
      const local = row.id === repo.LOCAL_SERVER_ID;
      const { accounts, ...units } = counts.get(row.id) ?? NOTHING;
      const pendingSince = oldest.map((of) => of.get(row.id)).filter((at): at is string => at !== undefined);
      return {
        id: row.id,
        name: row.name,
        roles: row.roles,
        ...addressesOf(row, config),
        capacity: fieldsOf(row).capacity,
        placement: row.placement,
        status: serverStatus(row, clock.now()),
        local,
        last_seen_at: row.last_seen_at,
        agent_version: row.agent_version,
        timezone: serverTimeZone(row),
        usage: { accounts, disk_bytes: disks[i] as number },
        units: { ...units, oldest_pending_at: pendingSince.sort()[0] ?? null },
        created_at: row.created_at,
        updated_at: row.updated_at,
        version: row.version,
      };
    });
  }
  const show = async (row: repo.ServerRow, q: Queryable = db) => (await showAll([row], q))[0] as Server;

  async function load(caller: Caller, id: string): Promise<repo.ServerRow> {
    const row = await repo.findServer(db, caller, id);
    if (!row) throw notFound('server');
    return row;
  }

  /**
   * A new one-use enrolment, shown once, and the hash of its token to store; refused (409) when
   * no agent listener is configured, before anything is written.
   */
  async function newEnrolment(): Promise<{ shown: Enrolment; tokenHash: string; expiresAt: Date }> {
    if (!agent) throw conflict('invalid_state', 'No agent listener is configured (BERTH_AGENT_LISTEN): agents cannot enrol.');
    const token = enrolmentSecret();
    const expiresAt = new Date(clock.now().getTime() + ENROLMENT_LIFETIME_MS);
    const command = `berth agent enrol --url ${agent.url()} --token ${token} --ca-fingerprint ${await agent.caFingerprint()}`;
    return { shown: { token, expires_at: expiresAt.toISOString(), command }, tokenHash: hashSecret(token), expiresAt };
  }

  const serverEvent = async (tx: Queryable, type: string, row: repo.ServerRow) =>
    publishEvent(tx, {
      type,
      accountId: null,
      resellerId: null,
      resource: { type: 'server', id: row.id, version: row.version },
      data: await show(row, tx),
    });

  const refuseDuplicateName = (err: unknown, name: string): never => {
    if (isUniqueViolation(err, 'servers_name_key')) throw conflict('already_exists', `A server is already named ${name}.`);
    throw err;
  };

  return {
    load,
    get: async (caller: Caller, id: string) => show(await load(caller, id)),

    async list(caller: Caller, filter: ServerListQuery, page: PageParams): Promise<Server[]> {
      requireKind(caller, ['operator'], 'list servers');
      const { status } = filter;
      const now = clock.now();
      const rows = await repo.listServers(
        db,
        caller,
        filter,
        page,
        status ? (params) => statusCondition(status, now, params) : undefined,
      );
      return showAll(rows);
    },

    async create(caller: Caller, input: CreateServer): Promise<ServerWithEnrolment> {
      requireKind(caller, ['operator'], 'create servers');
      const enrolment = await newEnrolment();
      const fields: ServerFields = {
        name: input.name,
        roles: input.roles,
        ipv4: input.ipv4,
        ipv6: input.ipv6 ?? null,
        capacity: input.capacity,
        placement: input.placement ?? 'enabled',
      };
      try {
        const row = await db.transaction(async (tx) => {
          const created = await repo.insertServer(tx, newId('srv'), fields, enrolment);
          await serverEvent(tx, 'server.created', created);
          return created;
        });
        return { ...(await show(row)), enrolment: enrolment.shown };
      } catch (err) {
        return refuseDuplicateName(err, input.name);
      }
    },

    async update(caller: Caller, id: string, patch: Partial<ServerFields>, expectedVersion?: number): Promise<Server> {
      const current = await load(caller, id);
      requireKind(caller, ['operator'], 'change servers');
      checkVersion(expectedVersion, current.version);
      const next = mergeFields(fieldsOf(current), patch);
      const dropped = current.roles.filter((r) => !next.roles.includes(r));
      if (dropped.length > 0) {
        if ((await accountsOn(id)) > 0)
          throw invalid([{ pointer: '/roles', code: 'in_use', detail: `accounts are placed on it for ${dropped.join(', ')}` }]);
      }
      try {
        const row = await db.transaction(async (tx) => {
          const updated = await repo.updateServer(tx, id, current.version, next);
          if (!updated) throw staleVersion();
          if (next.ipv4 !== current.ipv4 || next.ipv6 !== current.ipv6)
            for (const changed of hooks.addressesChanged ?? []) await changed(tx, id, addressesOf(current, config));
          await serverEvent(tx, 'server.updated', updated);
          return updated;
        });
        return show(row);
      } catch (err) {
        return refuseDuplicateName(err, next.name);
      }
    },

    async remove(caller: Caller, id: string, expectedVersion?: number): Promise<void> {
      const current = await load(caller, id);
      requireKind(caller, ['operator'], 'delete servers');
      checkVersion(expectedVersion, current.version);
      if (id === repo.LOCAL_SERVER_ID) throw conflict('invalid_state', 'The local server is this installation itself.');
      try {
        await db.transaction(async (tx) => {
          await serverEvent(tx, 'server.deleted', current);
          await repo.deleteServer(tx, id);
        });
      } catch (err) {
        // The accounts' placement references the server: the database refuses while one does.
        if (isForeignKeyViolation(err)) throw serverNotEmpty(await accountsOn(id));
        throw err;
      }
    },

    /**
     * Announces each change of a server's status between `online` and `unreachable` once
     * (server.online, server.unreachable): run by a loop and after a poll of a server that was
     * not online; the compare-and-set on `announced_status` keeps two processes from both announcing.
     */
    async announceStatuses(serverId?: string): Promise<void> {
      const now = clock.now();
      for (const row of await repo.enrolledRemoteServers(db, serverId)) {
        const status = serverStatus(row, now);
        if ((status !== 'online' && status !== 'unreachable') || status === row.announced_status) continue;
        await db.transaction(async (tx) => {
          if (await repo.setAnnouncedStatus(tx, row.id, row.announced_status, status))
            await serverEvent(tx, `server.${status}`, row);
        });
      }
    },

    /**
     * Starts the drain: the server takes no new account from now on, and the moves module's
     * drainer moves its accounts away, then marks it decommissioned. A repeated request changes nothing.
     */
    async drain(caller: Caller, id: string) {
      await load(caller, id);
      requireKind(caller, ['operator'], 'drain servers');
      requireWritable(caller);
      await db.transaction(async (tx) => {
        const row = await repo.startDraining(tx, id);
        if (row) await serverEvent(tx, 'server.draining', row);
      });
      return show(await load(caller, id));
    },

    /** The draining servers not yet decommissioned (what the drainer works on). */
    draining: () => repo.drainingServerIds(db),

    /** A drained server decommissioned, once (`server.decommissioned`). */
    async decommission(id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await repo.setDecommissioned(tx, id, clock.now());
        if (row) await serverEvent(tx, 'server.decommissioned', row);
      });
    },

    /** A new one-use token; the agent's certificate stays valid until the token is spent. */
    async newEnrolment(caller: Caller, id: string): Promise<ServerWithEnrolment> {
      await load(caller, id);
      requireKind(caller, ['operator'], 'enrol servers');
      if (id === repo.LOCAL_SERVER_ID)
        throw conflict('invalid_state', 'The local server is applied in-process: it has no agent.');
      const enrolment = await newEnrolment();
      const row = await repo.setEnrolmentToken(db, id, enrolment.tokenHash, enrolment.expiresAt);
      return { ...(await show(row)), enrolment: enrolment.shown };
    },
  };
}
export type ServersService = ReturnType<typeof serversService>;
