import { BerthError, createBerth, type Berth } from '@berth/sdk';

/** Who is signed in: a token, and with a login link the account it manages. */
export interface Session {
  token: string;
  /** Set when the session came from a login link: the one account this token reaches. */
  accountId?: string;
  accountName?: string;
}

// Session storage at most: gone with the tab, never sent by the browser on its own as a cookie is.
const KEY = 'berth.session';
export const loadSession = (): Session | null => JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Session | null;
export const saveSession = (s: Session | null) =>
  s ? sessionStorage.setItem(KEY, JSON.stringify(s)) : sessionStorage.removeItem(KEY);

export const berthFor = (token: string): Berth =>
  createBerth({ baseUrl: location.origin, token, retry: { attempts: 2, maxDelayMs: 2000 } });

/** A login link's code exchanged for a token of its account (`POST /v1/sessions`, no token needed). */
export async function exchangeLoginCode(code: string): Promise<{ token: string; account_id: string }> {
  const r = await fetch('/v1/sessions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login_code: code }),
  });
  if (!r.ok) throw await BerthError.from(r);
  return (await r.json()) as { token: string; account_id: string };
}

/** A problem's field errors by the body field they name (`/address` → `address`). */
export function fieldErrors(err: unknown): Record<string, string> {
  if (!(err instanceof BerthError)) return {};
  return Object.fromEntries(err.errors.map((e) => [e.pointer.replace(/^\//, '').split('/')[0] ?? '', e.detail]));
}

/** What a failed call tells a person: the problem's detail, or the error's message. */
export const problemText = (err: unknown): string =>
  err instanceof BerthError
    ? [`${err.title}: ${err.detail}`, ...err.errors.map((e) => `${e.pointer}: ${e.detail}`)].join(' — ')
    : err instanceof Error
      ? err.message
      : String(err);
