/**
 * The definers a dump's statement sets (`DEFINER = user@host`): a load runs its statements with a
 * right to set any definer (drivers/mariadb.ts), so each one is looked at before it is sent, and
 * one that is not a user of the account is refused. The dump comes from another server (a move's
 * source, a backup's), which is not trusted with this server's other accounts.
 *
 * The statement is read as MariaDB's lexer reads it in the load's session (checked there: no
 * `ANSI_QUOTES`, no `NO_BACKSLASH_ESCAPES`, a client character set without multi-byte quotes):
 * quoted parts with backslash escapes, comments skipped, executable comments (`/*!`, `/*M!`) read
 * as text. A server skips an executable comment whose version is above its own up to the first
 * `*\/`, wherever that is; a statement where such a `*\/` falls inside a quoted part or a comment
 * would be read differently by the two, and is refused whole.
 */
type Definer = { user: string; host: string | null } | { unreadable: true };

type Token = { kind: 'word' | 'quoted' | 'mark'; text: string };

/** What cannot be read the same way as the server reads it. */
class AmbiguousStatement extends Error {}

const isWordByte = (c: string) => /[A-Za-z0-9_$]/.test(c) || c.charCodeAt(0) >= 0x80;
const isSpace = (c: string) => c === ' ' || (c >= '\t' && c <= '\r');

/** The statement's tokens: words, quoted parts (unescaped) and single marks; comments and spaces left out. */
function tokens(s: string): Token[] {
  const out: Token[] = [];
  let executable = false;
  /** Where a quoted part or comment ends; inside an executable comment, a `*\/` before it is refused. */
  const closeAt = (from: number, end: number) => {
    if (executable && s.slice(from, end).includes('*/'))
      throw new AmbiguousStatement('a quoted part or comment holds the end of an executable comment');
    return end;
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    if (isSpace(c)) i++;
    else if (c === '#' || (c === '-' && s[i + 1] === '-' && (i + 2 >= s.length || s.charCodeAt(i + 2) <= 0x20))) {
      const eol = s.indexOf('\n', i);
      i = closeAt(i, eol === -1 ? s.length : eol) + 1;
    } else if (c === '/' && s[i + 1] === '*') {
      const bang = s[i + 2] === '!' ? i + 3 : s[i + 2] === 'M' && s[i + 3] === '!' ? i + 4 : -1;
      if (bang !== -1) {
        if (executable) throw new AmbiguousStatement('an executable comment inside another');
        executable = true;
        i = bang;
        while (i < s.length && s[i]! >= '0' && s[i]! <= '9') i++;
      } else {
        const end = s.indexOf('*/', i + 2);
        // Its own end is the first `*/`: the same for the server, whichever way it reads an executable comment around it.
        i = end === -1 ? s.length : end + 2;
      }
    } else if (c === '*' && s[i + 1] === '/' && executable) {
      executable = false;
      i += 2;
    } else if (c === "'" || c === '"' || c === '`') {
      let text = '';
      let j = i + 1;
      for (;;) {
        if (j >= s.length) throw new AmbiguousStatement('a quoted part is not closed');
        const d = s[j] as string;
        if (d === '\\' && c !== '`') {
          text += s[j + 1] ?? '';
          j += 2;
        } else if (d === c && s[j + 1] === c) {
          text += c;
          j += 2;
        } else if (d === c) break;
        else {
          text += d;
          j++;
        }
      }
      i = closeAt(i, j) + 1;
      out.push({ kind: 'quoted', text });
    } else if (isWordByte(c)) {
      let j = i + 1;
      while (j < s.length && isWordByte(s[j] as string)) j++;
      out.push({ kind: 'word', text: s.slice(i, j) });
      i = j;
    } else {
      out.push({ kind: 'mark', text: c });
      i++;
    }
  }
  return out;
}

/**
 * Every `DEFINER =` clause of the statement, its user and host (`user@host`, each a word or
 * quoted; host null where there is none: a role, `CURRENT_USER`); one that is not of that form
 * is `unreadable`. `DEFINER` not followed by `=` is a name (a column of `information_schema`).
 */
export function definersOf(statement: string): Definer[] {
  const t = tokens(statement);
  const name = (k: Token | undefined) => (k && (k.kind === 'word' || k.kind === 'quoted') ? k.text : null);
  const found: Definer[] = [];
  for (let i = 0; i < t.length; i++) {
    if (t[i]!.kind !== 'word' || t[i]!.text.toUpperCase() !== 'DEFINER' || t[i + 1]?.text !== '=') continue;
    const user = name(t[i + 2]);
    if (user === null) found.push({ unreadable: true });
    else if (t[i + 3]?.kind === 'mark' && t[i + 3]?.text === '@') {
      const host = name(t[i + 4]);
      found.push(host === null ? { unreadable: true } : { user, host });
    } else found.push({ user, host: null });
  }
  return found;
}

/**
 * Why the statement may not run in a load of the account's database `database` (`<username>_…`;
 * an account's username holds no `_`), or null: a definer that is not one of the account's users
 * (`<username>_…` at `host`, the host of every user Berth makes), or a statement not read as the
 * server would read it.
 */
export function refusedDefiner(statement: string, database: string, host: string): string | null {
  const prefix = database.slice(0, database.indexOf('_') + 1);
  let definers: Definer[];
  try {
    definers = definersOf(statement);
  } catch (err) {
    if (err instanceof AmbiguousStatement) return err.message;
    throw err;
  }
  for (const d of definers) {
    if ('unreadable' in d) return 'it sets a definer that is not of the form user@host';
    if (!prefix || !d.user.startsWith(prefix) || d.host?.toLowerCase() !== host.toLowerCase())
      return `it sets the definer ${JSON.stringify(`${d.user}${d.host === null ? '' : `@${d.host}`}`.slice(0, 200))}, not a user of the account (${prefix}…@${host})`;
  }
  return null;
}
