import { Command } from 'commander';
import type { Runtime } from './runtime.js';

type Event = { id: string; type: string; created_at: string; account_id: string | null; resource?: { id?: string } };
type Page = { data: Event[] };

/**
 * `berth events tail`: follows the feed with `after` and a long-poll `wait`, printing each new
 * event once, oldest first (one JSON object per line with `-o json`), as soon as it commits.
 * It starts after the newest event (or at `--after`); `--since` prints what happened since then
 * first.
 */
export function tailCommand(rt: Runtime): Command {
  return new Command('tail')
    .description('Follow the event feed (Ctrl-C stops)')
    .option('--type <type>', 'only events of this type')
    .option('--account <id>', 'only events of this account')
    .option('--since <time>', 'first print what happened since this time (RFC 3339)')
    .option('--after <event id>', 'start after this event instead of now')
    .action(async (o: { type?: string; account?: string; since?: string; after?: string }) => {
      const berth = rt.berth();
      const filter = { ...(o.type ? { type: o.type } : {}), ...(o.account ? { account_id: o.account } : {}) };
      const json = rt.format() === 'json';
      const print = (e: Event) =>
        process.stdout.write(
          json ? `${JSON.stringify(e)}\n` : `${e.created_at}  ${e.type.padEnd(28)} ${e.resource?.id ?? ''}  ${e.id}\n`,
        );
      const newest = async () =>
        ((await berth.GET('/v1/events', { params: { query: { limit: 1 } } })).data as Page | undefined)?.data[0];

      let after = o.after ?? (await newest())?.id;
      if (!o.after && o.since) {
        const past: Event[] = [];
        for await (const e of berth.list('/v1/events', { query: { ...filter, since: o.since } })) past.push(e);
        // Those after the starting point are answered by the feed below.
        for (const e of past.reverse()) if (!after || e.id <= after) print(e);
      }
      // An empty feed has nothing to follow from yet: its first event is the start.
      while (!after) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const first = await newest();
        if (first && (!o.type || first.type === o.type) && (!o.account || first.account_id === o.account)) print(first);
        after = first?.id;
      }
      for (;;) {
        const query = { ...filter, after, wait: 30, limit: 100 };
        const events: Event[] = ((await berth.GET('/v1/events', { params: { query } })).data as Page).data;
        for (const e of events) print(e);
        after = events.at(-1)?.id ?? after;
      }
    });
}
