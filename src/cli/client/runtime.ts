import { createInterface } from 'node:readline/promises';
import { createBerth, type Berth } from '@berth/sdk';
import { resolveTarget } from './contexts.js';
import { UsageError } from './errors.js';
import { defaultFormat, render, type Format } from './output.js';

/** What every command gets: the client (made on first use), the output format, the streams. */
export interface Runtime {
  env: Record<string, string | undefined>;
  berth(): Berth;
  format(): Format;
  print(value: unknown, columns?: string[]): void;
  /** A line for people, on stderr: never mixed into the output a program parses. */
  say(line: string): void;
  /** Asks on a terminal; without one the caller must have passed `--yes`. */
  confirm(question: string, yes: boolean | undefined): Promise<boolean>;
}

export function createRuntime(
  env: Record<string, string | undefined>,
  globals: () => { context?: string; output?: string },
): Runtime {
  let client: Berth | undefined;
  const format = (): Format => {
    const o = globals().output;
    if (o === undefined) return defaultFormat();
    if (o !== 'table' && o !== 'json') throw new UsageError(`--output must be table or json, not "${o}"`);
    return o;
  };
  return {
    env,
    berth() {
      if (!client) {
        const target = resolveTarget(env, globals().context);
        client = createBerth({ baseUrl: target.url, token: target.token, userAgent: 'berth-cli' });
      }
      return client;
    },
    format,
    print(value, columns = ['id']) {
      process.stdout.write(render(value, format(), columns) + '\n');
    },
    say(line) {
      process.stderr.write(line + '\n');
    },
    async confirm(question, yes) {
      if (yes) return true;
      if (!process.stdin.isTTY) throw new UsageError(`${question} Pass --yes to confirm without a terminal.`);
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
      } finally {
        rl.close();
      }
    },
  };
}
