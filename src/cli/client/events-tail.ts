import { Command } from 'commander';
import type { Runtime } from './runtime.js';

type Event = { id: string; type: string; created_at: string; account_id: string | null; resource?: { id?: string } };

/**
 * `berth events tail`: follows the feed, printing each new event once, oldest first (one JSON
 * object per line with `-o json`). It asks for what happened since the newest event it has
 * seen, so nothing is missed between two polls; ids already printed are skipped.
 */
export function tailCommand(rt: Runtime): Command {
  return new Command('tail')
    .description('Follow the event feed (Ctrl-C stops)')
    .option('--type <type>', 'only events of this type')
    .option('--account <id>', 'only events of this account')
    .option('--since <time>', 'start from this time (RFC 3339) instead of now')
    .option('--interval <ms>', 'how often to ask', (v) => Math.max(100, Number(v) || 1000), 1000)
    .action(async (o: { type?: string; account?: string; since?: string; interval: number }) => {
      const berth = rt.berth();
      const filter = { ...(o.type ? { type: o.type } : {}), ...(o.account ? { account_id: o.account } : {}) };
      /** Ids printed at or after `since`: older ones can no longer come back, and are forgotten. */
      const seen = new Map<string, string>();
      let since = o.since;
      if (!since) {
        // Now, as the server sees it: the newest event's time, and that event counted as seen.
        const { data } = await berth.GET('/v1/events', { params: { query: { ...filter, limit: 1 } as never } });
        const newest = (data as { data: Event[] }).data[0];
        since = newest?.created_at ?? new Date().toISOString();
        if (newest) seen.set(newest.id, newest.created_at);
      }
      const json = rt.format() === 'json';
      for (;;) {
        const fresh: Event[] = [];
        for await (const e of berth.list('/v1/events', { query: { ...filter, since } }))
          if (!seen.has((e as Event).id)) fresh.push(e);
        for (const e of fresh.reverse()) {
          seen.set(e.id, e.created_at);
          since = e.created_at > since ? e.created_at : since;
          process.stdout.write(
            json ? `${JSON.stringify(e)}\n` : `${e.created_at}  ${e.type.padEnd(28)} ${e.resource?.id ?? ''}  ${e.id}\n`,
          );
        }
        for (const [id, at] of seen) if (at < since) seen.delete(id);
        await new Promise((resolve) => setTimeout(resolve, o.interval));
      }
    });
}
