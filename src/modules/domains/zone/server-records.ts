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
    o: ZoneSteps & { alongside?: (tx: Queryable) => Promise<void> } = {},
  ): Promise<void> {
    const account = (await findAccountById(deps.db, accountId)) as AccountRow;
    for (const zone of await domains.zonesOfAccount(deps.db, accountId)) {
      await editZone(
        zone.id,
        account,
        (_name, entries) => {
          const changed = new Map<ZoneEntry, string>();
          const removed: string[] = [];
          const next = entries.flatMap((e) => {
            const role = roles.find((r) => r.role === (e.name === 'mail' ? 'mail' : 'web'));
            const from = e.type === 'A' ? role?.from.ipv4 : e.type === 'AAAA' ? role?.from.ipv6 : null;
            const change = role && from && e.content === from ? edit(e, role) : null;
            if (!change) return [e];
            if (change === GONE) {
              removed.push(e.id);
              return [];
            }
            const updated = { ...e, ...change };
            changed.set(updated, '/move');
            return [updated];
          });
          return { entries: next, changed, removed };
        },
        { alongside: o.alongside },
      );
      await o.afterZone?.();
    }
  }

  /**
   * Points the records at their target; a record of a family the target has no address of is
   * deleted (an AAAA record left at a source without the account would send IPv6 clients there).
   */
  const repoint = (accountId: string, roles: RoleRecords[]) =>
    eachRecord(accountId, roles, (e, role) => {
      const to = e.type === 'A' ? role.to.ipv4 : role.to.ipv6;
      return to ? { content: to } : GONE;
    });

  return {
    repoint,

    /**
     * A server's addresses changed from `had`: the records of the accounts it serves (web and
     * mail, moving ones too) that point at an address it had now point at the one it has, a
     * zone at a time (safe to run again: a record already changed is passed over). Those that
     * point at an address the server no longer has, with none of its family in its place, are
     * deleted. An address that did not change leaves its records as they are.
     */
    async readdress(serverId: string, had: ServerAddresses): Promise<void> {
      const now = await serverAddresses(deps, serverId);
      const from = {
        ipv4: had.ipv4 !== now.ipv4 ? had.ipv4 : null,
        ipv6: had.ipv6 !== now.ipv6 ? had.ipv6 : null,
      };
      if (!from.ipv4 && !from.ipv6) return;
      for (let after: string | undefined; ;) {
        const page = await accountsPlacedOn(deps.db, serverId, READDRESS_PAGE, { after, moving: true });
        for (const account of page) {
          const roles = (['web', 'mail'] as const).filter((r) => account.roles.includes(r));
          if (roles.length)
            await repoint(
              account.id,
              roles.map((role) => ({ role, from, to: now })),
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
