import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { problemText } from '../api.js';
import { useBerth } from '../app.js';
import { ListTable, Problem } from '../ui.js';

interface FeedEvent {
  id: string;
  type: string;
  created_at: string;
  resource?: { id?: string } | null;
}

/** The live feed: the latest events, then each new one as it commits (`after` with a 30 s long poll). */
export function EventsPage() {
  const { berth } = useBerth();
  const [events, setEvents] = useState<FeedEvent[]>([]);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    let stopped = false;
    const controller = new AbortController();
    async function follow() {
      try {
        const latest = (await berth.GET('/v1/events', { params: { query: { limit: 25 } } })).data?.data ?? [];
        setEvents(latest);
        let after = latest[0]?.id;
        while (!stopped) {
          const query = after ? { after, wait: 30, limit: 100 } : { limit: 25 };
          const page = ((await berth.GET('/v1/events', { params: { query }, signal: controller.signal })).data?.data ??
            []) as FeedEvent[];
          // `after` answers oldest first; the list shows the newest on top.
          const fresh = after ? [...page].reverse() : page;
          if (fresh.length) {
            after = after ? page.at(-1)?.id : page[0]?.id;
            setEvents((shown) => [...fresh, ...shown].slice(0, 200));
          } else if (!after) await new Promise((r) => setTimeout(r, 2000));
        }
      } catch (err) {
        if (!stopped) setProblem(problemText(err));
      }
    }
    void follow();
    return () => {
      stopped = true;
      controller.abort();
    };
  }, [berth]);

  return (
    <section aria-labelledby="events-title">
      <h1 id="events-title">Events</h1>
      <Operations />
      <h2>Feed</h2>
      <Problem error={problem} />
      <ol className="feed" aria-live="polite">
        {events.map((e) => (
          <li key={e.id}>
            <time dateTime={e.created_at}>{new Date(e.created_at).toLocaleTimeString()}</time> <code>{e.type}</code>{' '}
            {e.resource?.id}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** The latest operations, the running ones with their progress, looked at again every two seconds. */
function Operations() {
  const { berth } = useBerth();
  const operations = useQuery({
    queryKey: ['operations'],
    queryFn: async () => (await berth.GET('/v1/operations', { params: { query: { limit: 20 } } })).data,
    refetchInterval: 2_000,
  });
  return (
    <ListTable
      caption="Operations"
      rows={operations.data?.data}
      columns={[
        ['Operation', (o) => o.id],
        ['Type', (o) => o.type],
        ['Of', (o) => o.resource.id],
        ['Status', (o) => o.status],
        ['Progress', (o) => <progress aria-label={`Progress of ${o.id}`} max={100} value={o.progress} />],
      ]}
    />
  );
}
