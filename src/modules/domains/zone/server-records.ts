import type { Config } from '../../../config.js';
import type { Queryable } from '../../../db/client.js';
import { findAccountById, type AccountRow } from '../../accounts/index.js';
import type { ServiceDeps } from '../../deps.js';
import { findServerById, LOCAL_SERVER_ID } from '../../servers/index.js';
import type { StoredEntry, ZoneEntry } from '../records/repo.js';
import * as domains from '../repo.js';
import { zoneEditor } from './edit.js';

/** A server's addresses as zones publish them: the local server's are the configured ones. */
export interface ServerAddresses {
  ipv4: string | null;
  ipv6: string | null;
}

export async function serverAddresses(deps: { db: ServiceDeps['db']; config: Config }, id: string): Promise<ServerAddresses> {
  if (id === LOCAL_SERVER_ID) return { ipv4: deps.config.webIpv4, ipv6: deps.config.webIpv6 };
  const server = await findServerById(deps.db, id);
  return { ipv4: server?.ipv4 ?? null, ipv6: server?.ipv6 ?? null };
}

/** A role's records move from the source's addresses to the target's. */
export interface RoleRecords {
  role: 'web' | 'mail';
  from: ServerAddresses;
  to: ServerAddresses;
}

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
   * The A/AAAA records of `roles` that point at their source, each given the change `edit` makes,
   * a zone at a time; `alongside` commits with each zone's change, `afterZone` runs once it has
   * committed (a crash test's point halfway through a move's step).
   */
  async function eachRecord(
    accountId: string,
    roles: RoleRecords[],
    edit: (e: StoredEntry, role: RoleRecords) => Partial<ZoneEntry> | null,
    o: ZoneSteps & { alongside?: (tx: Queryable) => Promise<void> } = {},
  ): Promise<void> {
    const account = (await findAccountById(deps.db, accountId)) as AccountRow;
    for (const zone of await domains.zonesOfAccount(deps.db, accountId)) {
      await editZone(
        zone.id,
        account,
        (_name, entries) => {
          const changed = new Map<ZoneEntry, string>();
          const next = entries.map((e) => {
            const role = roles.find((r) => r.role === (e.name === 'mail' ? 'mail' : 'web'));
            const from = e.type === 'A' ? role?.from.ipv4 : e.type === 'AAAA' ? role?.from.ipv6 : null;
            const change = role && from && e.content === from ? edit(e, role) : null;
            if (!change) return e;
            const updated = { ...e, ...change };
            changed.set(updated, '/move');
            return updated;
          });
          return { entries: next, changed, removed: [] };
        },
        { alongside: o.alongside },
      );
      await o.afterZone?.();
    }
  }

  return {
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

    /** Points the records at their target. */
    repoint: (accountId: string, roles: RoleRecords[]) =>
      eachRecord(accountId, roles, (e, role) => {
        const to = e.type === 'A' ? role.to.ipv4 : role.to.ipv6;
        return to ? { content: to } : null;
      }),

    /** Gives the records (pointing at the roles' `from` now) that still exist the TTLs `had` holds (what lowerTtl returned). */
    restoreTtl: (accountId: string, roles: RoleRecords[], had: Record<string, number>, o: ZoneSteps = {}) =>
      eachRecord(accountId, roles, (e) => (had[e.id] ? { ttl: had[e.id] } : null), o),
  };
}
export type ServerRecords = ReturnType<typeof serverRecords>;
