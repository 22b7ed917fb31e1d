/** Bytes that matter to the split; everything else is passed through as it is. */
const SQUOTE = 0x27;
const DQUOTE = 0x22;
const BACKTICK = 0x60;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
const DASH = 0x2d;
const HASH = 0x23;
const SLASH = 0x2f;
const STAR = 0x2a;
const BANG = 0x21;
const M = 0x4d;

/** Where the split is: in a statement's text, or inside something a delimiter does not end. */
const enum In {
  Text,
  Single,
  Double,
  Backtick,
  LineComment,
  BlockComment,
}

/** MariaDB takes no statement larger than this (`max_allowed_packet` at its highest). */
const MAX_STATEMENT_BYTES = 2 ** 30;

const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);
/** Besides the delimiter's first byte, what may start a quoted part or a comment. */
const SPECIAL = [SQUOTE, DQUOTE, BACKTICK, HASH, DASH, SLASH];

/**
 * The statements of a `mariadb-dump`, split as the `mariadb` client splits its input, so that they
 * can be sent one by one over a connection of this process (drivers/mariadb.ts): that client
 * parses a dump a byte at a time and waits for each statement's answer before parsing the next,
 * which made a load take 1.4–1.9 times as long (bench/HISTORY.md, "2026-12-05, afternoon").
 *
 * A statement ends at the delimiter (`;`, or what a `DELIMITER` line sets, as a dump's triggers
 * and routines do) outside quotes (`'` and `"` with backslash escapes, `` ` ``) and comments
 * (`-- `, `#`, `/* *\/`). Executable comments (`/*!`, `/*M!`) are the statement's own text, as they
 * are to the client. The client's other commands (`\!`, `source` and the rest) are not commands
 * here: the server refuses them as SQL. Each statement is a latin1 string of its bytes, sent as
 * they are over a connection whose character set is binary: the dump's own `SET NAMES` tells the
 * server how to read them.
 */
export class DumpStatements {
  private data: Buffer = Buffer.alloc(0);
  private length = 0;
  /** How far into `data` (which starts with the current statement) the split has looked. */
  private scanned = 0;
  private in = In.Text;
  /** Whether the current statement holds more than spaces and comments. */
  private content = false;
  private delimiter: Buffer = Buffer.from(';');

  constructor(private readonly o: { maxBytes: number } = { maxBytes: MAX_STATEMENT_BYTES }) {}

  /** The statements that `chunk` completes. */
  push(chunk: Buffer): string[] {
    if (this.length + chunk.length > this.data.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.length + chunk.length, this.data.length * 2, 2 ** 20));
      this.data.copy(grown, 0, 0, this.length);
      this.data = grown;
    }
    chunk.copy(this.data, this.length);
    this.length += chunk.length;
    const statements = this.split(false);
    if (this.length > this.o.maxBytes) throw new Error(`a statement of the dump exceeds ${this.o.maxBytes} bytes`);
    return statements;
  }

  /** The last statement, if the dump ends without its delimiter (the client runs it too). */
  end(): string[] {
    return this.split(true);
  }

  private split(final: boolean): string[] {
    const d = this.data.subarray(0, this.length);
    const n = d.length;
    const statements: string[] = [];
    /** The next position of each byte looked for, found once and kept until passed. */
    const next = new Map<number, number>();
    const nextOf = (byte: number, from: number) => {
      let at = next.get(byte);
      if (at === undefined || (at !== -1 && at < from)) {
        at = d.indexOf(byte, from);
        next.set(byte, at);
      }
      return at === -1 ? n : at;
    };
    let start = 0;
    let i = this.scanned;
    scan: while (i < n) {
      switch (this.in) {
        case In.Text: {
          if (!this.content) {
            if (isSpace(d[i] as number)) {
              i++;
              continue;
            }
            const command = this.delimiterCommand(d, i, final);
            if (command === undefined) break scan;
            if (command !== null) {
              this.delimiter = command.delimiter;
              next.clear();
              i = start = command.end;
              continue;
            }
          }
          let at = nextOf(this.delimiter[0] as number, i);
          for (const byte of SPECIAL) at = Math.min(at, nextOf(byte, i));
          // Before `at`, nothing but the statement's text: `i` is no space when it has none yet.
          if (at > i) this.content = true;
          if (at >= n) {
            i = n;
            break scan;
          }
          const opens = this.opening(d, at, final);
          if (opens === undefined) {
            i = at;
            break scan; // the bytes that tell are still to come
          }
          if (opens === 'delimiter') {
            if (this.content) statements.push(d.toString('latin1', start, at));
            i = start = at + this.delimiter.length;
            this.content = false;
          } else if (opens === 'comment') i = at + (d[at] === HASH ? 1 : 2);
          else {
            this.content = true;
            i = at + 1;
          }
          continue;
        }
        case In.Single:
        case In.Double: {
          const closing = nextOf(this.in === In.Single ? SQUOTE : DQUOTE, i);
          const escape = nextOf(BACKSLASH, i);
          if (escape < closing) {
            if (escape + 1 >= n && !final) {
              i = escape;
              break scan; // the escaped byte is still to come
            }
            i = escape + 2;
          } else if (closing >= n) {
            i = n;
            break scan;
          } else {
            i = closing + 1;
            this.in = In.Text;
          }
          continue;
        }
        case In.Backtick:
        case In.LineComment: {
          const end = nextOf(this.in === In.Backtick ? BACKTICK : NEWLINE, i);
          if (end >= n) {
            i = n;
            break scan;
          }
          i = end + 1;
          this.in = In.Text;
          continue;
        }
        case In.BlockComment: {
          const end = d.indexOf('*/', i, 'latin1');
          if (end === -1) {
            i = Math.max(i, n - 1); // a `*` at the end may open the `*/`
            break scan;
          }
          i = end + 2;
          this.in = In.Text;
          continue;
        }
      }
    }
    if (final) {
      if (this.content) statements.push(d.toString('latin1', start, n));
      start = i = n;
    }
    // What is left (the current statement) moves to the front.
    d.copy(this.data, 0, start, n);
    this.length = n - start;
    this.scanned = i - start;
    return statements;
  }

  /**
   * A `DELIMITER x` line where a statement would start (the client's command, not sent): the
   * delimiter it sets and where its line ends; null if there is none; undefined until the
   * bytes that tell have come.
   */
  private delimiterCommand(d: Buffer, at: number, final: boolean): { delimiter: Buffer; end: number } | null | undefined {
    const word = 'delimiter';
    if (((d[at] as number) | 0x20) !== 0x64) return null;
    if (at + word.length >= d.length) return final ? null : undefined;
    if (d.toString('latin1', at, at + word.length).toLowerCase() !== word) return null;
    const after = d[at + word.length] as number;
    if (after !== 0x20 && after !== 0x09) return null;
    const eol = d.indexOf(NEWLINE, at);
    if (eol === -1 && !final) return undefined;
    const end = eol === -1 ? d.length : eol;
    const set = d
      .toString('latin1', at + word.length, end)
      .trim()
      .split(/\s/)[0];
    return set ? { delimiter: Buffer.from(set, 'latin1'), end: Math.min(end + 1, d.length) } : null;
  }

  /**
   * What the byte at `at` starts: the delimiter, a comment (its state set), or the statement's
   * text, a quoted part among it (its state set); undefined when the bytes that tell are still to come.
   */
  private opening(d: Buffer, at: number, final: boolean): 'delimiter' | 'comment' | 'text' | undefined {
    const n = d.length;
    const c = d[at] as number;
    const wanted = (count: number) => at + count < n || final;
    if (c === this.delimiter[0]) {
      const length = this.delimiter.length;
      if (at + length > n) return final ? 'text' : undefined;
      if (d.compare(this.delimiter, 0, length, at, at + length) === 0) return 'delimiter';
    }
    if (c === SQUOTE || c === DQUOTE || c === BACKTICK) {
      this.in = c === SQUOTE ? In.Single : c === DQUOTE ? In.Double : In.Backtick;
      return 'text';
    }
    if (c === HASH) {
      this.in = In.LineComment;
      return 'comment';
    }
    if (c === DASH) {
      if (!wanted(2)) return undefined;
      // `--` opens a comment only before a space or a control character, as in MariaDB.
      if (d[at + 1] === DASH && (at + 2 >= n || (d[at + 2] as number) <= 0x20)) {
        this.in = In.LineComment;
        return 'comment';
      }
      return 'text';
    }
    if (c === SLASH) {
      if (!wanted(3)) return undefined;
      if (d[at + 1] !== STAR) return 'text';
      const executable = d[at + 2] === BANG || (d[at + 2] === M && d[at + 3] === BANG);
      if (executable) return 'text';
      this.in = In.BlockComment;
      return 'comment';
    }
    return 'text';
  }
}
