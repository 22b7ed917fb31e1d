/** Keyset paging in SQL: newest first by id, `limit + 1` rows so the caller knows if more follow. */
export interface PageParams {
  limit: number;
  /** Rows strictly older (smaller id) than this one; ids are time-ordered TypeIDs. */
  afterId: string | null;
}

/** SQL for the keyset condition and limit; appends parameters. */
export function pageSql(page: PageParams, idCol: string, params: unknown[]): { where: string; tail: string } {
  let where = 'TRUE';
  if (page.afterId) {
    params.push(page.afterId);
    where = `${idCol} < $${params.length}`;
  }
  params.push(page.limit + 1);
  return { where, tail: `ORDER BY ${idCol} DESC LIMIT $${params.length}` };
}
