import type { Config } from '../../../config.js';
import type { Queryable } from '../../../db/client.js';
import { accountsPlacedOn, findAccountById, type AccountRow } from '../../accounts/index.js';
import type { ServiceDeps } from '../../deps.js';
import { addressesOf, findServerById, type ServerAddresses } from '../../servers/index.js';
import type { StoredEntry, ZoneEntry } from '../records/repo.js';
import * as domains from '../repo.js';
import { zoneEditor } from './edit.js';

export async function serverAddresses(deps: { db: ServiceDeps['db']; config: Config }, id: string): Promise<ServerAddresses> {
  const server = await findServerById(deps.db, id);
  return server ? addressesOf(server, deps.config) : { ipv4: null, ipv6: null };
}

/** A readdressing job's `from`, as it was sent. */
export function readdressFrom(sent: unknown): ServerAddresses {
  const had = (sent ?? {}) as Record<string, unknown>;
  const address = (a: unknown) => (typeof a === 'string' ? a : null);
  return { ipv4: address(had.ipv4), ipv6: address(had.ipv6) };
}

/** Accounts a readdressing changes at a time. */
const READDRESS_PAGE = 100;

/** A role's records move from the source's addresses to the target's. */
export interface RoleRecords {
  role: 'web' | 'mail';
  from: ServerAddresses;
  to: ServerAddresses;
}

/** An edit's answer for a record to delete: the place its role moves to has no address of its family. */
const GONE = 'gone';

/** What runs between an account's zones as they change one after the other. */
interface ZoneSteps {
  afterZone?: () => Promise<void>;
}

type Family = 'ipv4' | 'ipv6';
const FAMILY: Record<string, Family> = { A: 'ipv4', AAAA: 'ipv6' };
const TYPE_OF: Record<Family, string> = { ipv4: 'A', ipv6: 'AAAA' };
const OTHER: Record<Family, Family> = { ipv4: 'ipv6', ipv6: 'ipv4' };
/** The role whose server an address record points at: `mail.<domain>` is the mail host's (the template's), the rest the web's. */
const roleOf = (e: ZoneEntry) => (e.name === 'mail' ? 'mail' : 'web');

/**
 * The records a role gains where its `to` has an address of a family its `from` has none of: each
 * template record (`@`, `www`, `mail`) of the other family that points at `from` gets its
 * counterpart at the new address, unless its name has a record of that family already. The
 * template writes both families where the server has them; the owner's own records are theirs
 * to complete. `ttls`: the TTLs the served records had before a move lowered them.
 */
function gained(entries: StoredEntry[], roles: RoleRecords[], ttls: Record<string, number>): ZoneEntry[] {
  const added: ZoneEntry[] = [];
  for (const role of roles)
    for (const family of ['ipv4', 'ipv6'] as const) {
      const [to, other] = [role.to[family], role.from[OTHER[family]]];
      if (!to || role.from[family] || !other) continue;
      for (const e of entries) {
        const served = e.template && FAMILY[e.type] === OTHER[family] && e.content === other && roleOf(e) === role.role;
        const has = (x: ZoneEntry) => x.name === e.name && x.type === TYPE_OF[family];
        if (served && !entries.some(has) && !added.some(has))
          added.push({ name: e.name, type: TYPE_OF[family], ttl: ttls[e.id] ?? e.ttl, content: to, template: true });
      }
    }
  return added;
}

/**
 * The records of an account's zones that point at a server, as a move changes them: an A or AAAA
 * record is the mail role's when it is `mail.<domain>` (the template's mail host), else the web
 * role's; it points at a server when its content is that server's address. Each zone changes by
 * the one path records change (zoneEditor: validated, serial bumped, applied).
 */
export function serverRecords(deps: ServiceDeps) {
  const editZone = zoneEditor(deps);

  /**
   * The A/AAAA records of `roles` that point at their source, each given the change `edit` makes
   * (or deleted where it answers GONE), a zone at a time; `alongside` commits with each zone's
   * change, `afterZone` runs once it has committed (a crash test's point halfway through a move's
   * step).
   */
  async function eachRecord(
    accountId: string,
    roles: RoleRecords[],
    edit: (e: StoredEntry, role: RoleRecords) => Partial<ZoneEntry> | typeof GONE | null,
    o: ZoneSteps & {
      alongside?: (tx: Queryable) => Promise<void>;
      /** The records a role gains (see `gained`) are added, with these TTLs for what a move lowered. */
      gains?: Record<string, number>;
    } = {},
  ): Promise<void> {
    const account = (await findAccountById(deps.db, accountId)) as AccountRow;
    for (const zone of await domains.zonesOfAccount(deps.db, accountId)) {
      await editZone(
        zone.id,
        account,
        (_name, entries) => {
          const changed = new Map<ZoneEntry, string>();
          const removed: string[] = [];
          const next: ZoneEntry[] = entries.flatMap((e) => {
            const role = roles.find((r) => r.role === roleOf(e));
            const from = FAMILY[e.type] ? role?.from[FAMILY[e.type] as Family] : null;
            const change = role && from && e.content === from ? edit(e, role) : null;
            if (!change || (change !== GONE && Object.entries(change).every(([k, v]) => e[k as keyof ZoneEntry] === v)))
              return [e];
            if (change === GONE) {
              removed.push(e.id);
              return [];
            }
            const updated = { ...e, ...change, byApi: true };
            changed.set(updated, '/move');
            return [updated];
          });
          for (const added of o.gains ? gained(entries, roles, o.gains) : []) {
            next.push(added);
            changed.set(added, '/move');
          }
          return { entries: next, changed, removed };
        },
        { alongside: o.alongside },
      );
      await o.afterZone?.();
    }
  }

  /**
   * Points the records at their target; a record of a family the target has no address of is
   * deleted (an AAAA record left at a source without the account would send IPv6 clients there),
   * and a family the target has and the source had none of is added (`gained`).
   */
  const repoint = (accountId: string, roles: RoleRecords[], ttls: Record<string, number> = {}) =>
    eachRecord(
      accountId,
      roles,
      (e, role) => {
        const to = role.to[FAMILY[e.type] as Family];
        return to ? { content: to } : GONE;
      },
      { gains: ttls },
    );

  return {
    repoint,

    /**
     * A server's addresses changed from `had`: the records of the accounts it serves (web and
     * mail, moving ones too) that point at an address it had now point at the one it has, a
     * zone at a time (safe to run again: a record already changed is passed over). Those that
     * point at an address the server no longer has, with none of its family in its place, are
     * deleted; an address of a family it had none of gives the template's records their
     * counterparts there (`gained`). An address that did not change leaves its records as they are.
     */
    async readdress(serverId: string, had: ServerAddresses): Promise<void> {
      const now = await serverAddresses(deps, serverId);
      if (had.ipv4 === now.ipv4 && had.ipv6 === now.ipv6) return;
      for (let after: string | undefined; ;) {
        const page = await accountsPlacedOn(deps.db, serverId, READDRESS_PAGE, { after, moving: true });
        for (const account of page) {
          const roles = (['web', 'mail'] as const).filter((r) => account.roles.includes(r));
          if (roles.length)
            await repoint(
              account.id,
              roles.map((role) => ({ role, from: had, to: now })),
            );
        }
        if (page.length < READDRESS_PAGE) return;
        after = page.at(-1)?.id;
      }
    },

    /** Lowers the TTL of the records to at most `ttl`, handing each zone's old TTLs (by record id) to `record` in its transaction. */
    async lowerTtl(
      accountId: string,
      roles: RoleRecords[],
      ttl: number,
      record: (tx: Queryable, had: Record<string, number>) => Promise<void>,
      o: ZoneSteps = {},
    ): Promise<void> {
      let had: Record<string, number> = {};
      await eachRecord(
        accountId,
        roles,
        (e) => {
          if (e.ttl <= ttl) return null;
          had[e.id] = e.ttl;
          return { ttl };
        },
        {
          ...o,
          alongside: async (tx) => {
            await record(tx, had);
            had = {};
          },
        },
      );
    },

    /** Gives the records (pointing at the roles' `from` now) that still exist the TTLs `had` holds (what lowerTtl returned). */
    restoreTtl: (accountId: string, roles: RoleRecords[], had: Record<string, number>, o: ZoneSteps = {}) =>
      eachRecord(accountId, roles, (e) => (had[e.id] ? { ttl: had[e.id] } : null), o),
  };
}
export type ServerRecords = ReturnType<typeof serverRecords>;
