import { parse, protocol, type PGlite, type Results } from '@electric-sql/pglite';

const { serialize } = protocol;

/** Past this many distinct texts a session's statements run unnamed: Berth's are its own constants (both engines). */
export const MAX_PREPARED = 2000;

/** Each instance names its statements apart: a session's names are its own. */
let instances = 0;

/** The messages as one array of its own (`Buffer.concat` hands a small one out of a shared pool, at an offset). */
const joined = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/**
 * Named statements on PGlite, as `pg` gets them on PostgreSQL (StatementNames): PGlite's `query`
 * parses, describes and plans its text at every call, in six calls into the WebAssembly backend;
 * a statement parsed once is bound and executed in one (a primary-key lookup about 180 µs
 * instead of 500). A statement is the session's until it ends, whatever a transaction does.
 */
export class PgliteStatements {
  private readonly statements = new Map<string, { name: string; types: number[] }>();
  private readonly prefix = `b${instances++}_`;
  /** Past `max` distinct texts, statements run unnamed (PGlite's own `query`). */
  constructor(
    private readonly pg: PGlite,
    private readonly max = MAX_PREPARED,
  ) {}

  /** Outside a transaction: waits for one under way, as PGlite's `query` does. */
  query<T>(text: string, params: unknown[]): Promise<Results<T>> {
    if (!this.named(text)) return this.pg.query<T>(text, params);
    return this.pg._runExclusiveTransaction(() => this.pg.runExclusive(() => this.run<T>(text, params, true)));
  }

  /** Inside the transaction PGlite's `transaction` holds (`t.query` runs unnamed ones). */
  inTransaction<T>(text: string, params: unknown[], unnamed: () => Promise<Results<T>>): Promise<Results<T>> {
    if (!this.named(text)) return unnamed();
    return this.pg.runExclusive(() => this.run<T>(text, params, false));
  }

  private named(text: string): boolean {
    return this.statements.has(text) || this.statements.size < this.max;
  }

  private async run<T>(text: string, params: unknown[], syncToFs: boolean): Promise<Results<T>> {
    let statement = this.statements.get(text);
    if (!statement) {
      const name = `${this.prefix}${this.statements.size}`;
      const described = await this.pg.execProtocolStream(
        joined([serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()]),
        { syncToFs: false },
      );
      statement = { name, types: parse.parseDescribeStatementResults(described) };
      this.statements.set(text, statement);
    }
    const { types } = statement;
    // The values as PGlite's `query` serializes them, by the parameters' types (`toString` where
    // it has no serializer for the type).
    const values = params.map((v, i) => {
      if (v === null || v === undefined) return null;
      const serializer = this.pg.serializers[types[i] as number];
      return serializer ? serializer(v) : (v as { toString(): string }).toString();
    });
    const messages = await this.pg.execProtocolStream(
      joined([
        serialize.bind({ statement: statement.name, values }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
        serialize.sync(),
      ]),
      { syncToFs },
    );
    return parse.parseResults(messages, this.pg.parsers)[0] as Results<T>;
  }
}
