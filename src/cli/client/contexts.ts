import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { UsageError } from './errors.js';

/** Where a Berth server is and the token to call it with. */
export interface Target {
  url: string;
  token: string;
}
export interface ContextFile {
  current: string | null;
  contexts: Record<string, Target>;
}
type Env = Record<string, string | undefined>;

/** `$BERTH_CONFIG`, else `$XDG_CONFIG_HOME/berth/config.json` (`~/.config/berth/config.json`). */
const contextFilePath = (env: Env) =>
  env.BERTH_CONFIG ?? path.join(env.XDG_CONFIG_HOME ?? path.join(homedir(), '.config'), 'berth', 'config.json');

export function readContexts(env: Env): ContextFile {
  try {
    const parsed = JSON.parse(readFileSync(contextFilePath(env), 'utf8')) as Partial<ContextFile>;
    return { current: parsed.current ?? null, contexts: parsed.contexts ?? {} };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { current: null, contexts: {} };
    throw new UsageError(`cannot read ${contextFilePath(env)}: ${(err as Error).message}`);
  }
}

/** Written whole and renamed into place, readable by its owner only: it holds tokens. */
export function writeContexts(env: Env, file: ContextFile): void {
  const target = contextFilePath(env);
  mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  const temp = `${target}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(file, null, 2) + '\n', { mode: 0o600 });
  renameSync(temp, target);
}

/**
 * The server to call: `--context NAME`, else the current context; `BERTH_URL` and `BERTH_TOKEN`
 * override either field (and are enough on their own, as in CI jobs).
 */
export function resolveTarget(env: Env, contextName: string | undefined): Target {
  const file = readContexts(env);
  const name = contextName ?? file.current;
  const chosen = name ? file.contexts[name] : undefined;
  if (contextName && !chosen) throw new UsageError(`no context named "${contextName}" (see: berth context list)`);
  const url = env.BERTH_URL || chosen?.url;
  const token = env.BERTH_TOKEN || chosen?.token;
  if (!url || !token)
    throw new UsageError(
      'no server configured: run `berth context add NAME --url URL --token TOKEN`, or set BERTH_URL and BERTH_TOKEN',
    );
  return { url, token };
}
