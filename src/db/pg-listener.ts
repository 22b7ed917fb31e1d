import pg from 'pg';

type Handler = (payload: string) => void;

const listenSql = (channel: string) => `LISTEN ${pg.escapeIdentifier(channel)}`;

/**
 * The LISTEN session of a PostgreSQL database: one connection, outside the pool, for every
 * channel the process listens on (the job queue's, the webhook relay's), not one each. A lost
 * connection is made again after a second and listens on every channel again; meanwhile the
 * listeners' owners fall back on what they poll. The last unsubscribe closes it.
 */
export class PgListener {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private readonly handlers = new Map<string, Set<Handler>>();

  constructor(private readonly config: pg.ClientConfig) {}

  async listen(channel: string, onNotify: Handler): Promise<() => Promise<void>> {
    // A handler of its own: the same function subscribed twice is unsubscribed once each.
    const handler: Handler = (payload) => onNotify(payload);
    const known = this.handlers.get(channel);
    const set = known ?? new Set<Handler>();
    this.handlers.set(channel, set);
    set.add(handler);
    if (!this.client) await (this.connecting ??= this.connect());
    // The first handler of a channel LISTENs (also after a connect that began before it was
    // added); the next ones share it, so a request that waits for a notification (a feed's
    // follower, a task's waiter) costs no statement while others wait too.
    if (!known) await this.client?.query(listenSql(channel)).catch(() => undefined);
    return () => this.unsubscribe(channel, handler);
  }

  private async connect(): Promise<void> {
    const c = new pg.Client(this.config);
    c.on('notification', (m) => {
      for (const h of this.handlers.get(m.channel) ?? []) h(m.payload ?? '');
    });
    c.on('error', () => this.lost(c));
    c.on('end', () => this.lost(c));
    try {
      await c.connect();
      for (const channel of this.handlers.keys()) await c.query(listenSql(channel));
      this.client = c;
    } catch {
      this.lost(c);
    } finally {
      this.connecting = undefined;
    }
  }

  /** A connection ended or failed: made again in a second while anyone listens. */
  private lost(c: pg.Client): void {
    if (this.client && this.client !== c) return; // an earlier connection's last event
    this.client = undefined;
    c.end().catch(() => undefined);
    if (this.handlers.size === 0 || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (!this.client && this.handlers.size) this.connecting ??= this.connect();
    }, 1000).unref();
  }

  private async unsubscribe(channel: string, handler: Handler): Promise<void> {
    const set = this.handlers.get(channel);
    if (!set?.delete(handler) || set.size) return;
    this.handlers.delete(channel);
    if (this.handlers.size) {
      await this.client?.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => undefined);
      return;
    }
    clearTimeout(this.retry);
    this.retry = undefined;
    await this.connecting;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }
}
