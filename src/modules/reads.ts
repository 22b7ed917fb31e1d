import type { Caller } from '../auth/caller.js';
import type { Queryable } from '../db/client.js';
import type { PageParams } from '../db/paging.js';
import { notFound } from '../lib/errors.js';

/**
 * The reads every resource's service starts with: `load` (the row in the caller's reach, else
 * a 404 that does not say whether it exists; also the routes' reach), and `get` and `list` in
 * the API's shape.
 */
export function resourceReads<Row, Shown, Filter>(
  db: Queryable,
  o: {
    noun: string;
    /** The repository's reads, in the caller's reach. */
    find: (db: Queryable, caller: Caller, id: string) => Promise<Row | undefined>;
    list: (db: Queryable, caller: Caller, filter: Filter, page: PageParams) => Promise<Row[]>;
    show: (row: Row) => Shown;
  },
) {
  async function load(caller: Caller, id: string): Promise<Row> {
    const row = await o.find(db, caller, id);
    if (!row) throw notFound(o.noun);
    return row;
  }
  return {
    load,
    get: async (caller: Caller, id: string): Promise<Shown> => o.show(await load(caller, id)),
    list: async (caller: Caller, filter: Filter, page: PageParams): Promise<Shown[]> =>
      (await o.list(db, caller, filter, page)).map(o.show),
  };
}
