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

/**
 * A problem's field errors by the form field they belong to: the deepest part of the pointer that
 * names one (`/create/0/content` → `content`, `/command/shell` → `command`), else its first part.
 */
export function fieldErrors(err: unknown, isField: (name: string) => boolean = () => false): Record<string, string> {
  if (!(err instanceof BerthError)) return {};
  return Object.fromEntries(
    err.errors.map((e) => {
      const parts = e.pointer.replace(/^\//, '').split('/');
      return [[...parts].reverse().find(isField) ?? parts[0] ?? '', e.detail];
    }),
  );
}

/** What a failed call tells a person: the problem's detail, or the error's message. */
export const problemText = (err: unknown): string =>
  err instanceof BerthError
    ? [`${err.title}: ${err.detail}`, ...err.errors.map((e) => `${e.pointer}: ${e.detail}`)].join(' — ')
    : err instanceof Error
      ? err.message
      : String(err);

/**
 * A file fetched with the token and handed to the browser to save (a backup's archive, a zone
 * file); `onBytes` counts it against `Content-Length`. It is held in the tab's memory until saved:
 * fine for a panel's sizes, and the CLI streams the large ones to disk.
 */
export async function download(
  url: string,
  token: string,
  file: { name: string; type: string },
  onBytes?: (got: number, total: number) => void,
) {
  const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (!r.ok || !r.body) throw r.ok ? new Error('The download was empty.') : await BerthError.from(r);
  const total = Number(r.headers.get('content-length') ?? 0);
  const parts: Uint8Array[] = [];
  let got = 0;
  for await (const part of r.body as unknown as AsyncIterable<Uint8Array>) {
    parts.push(part);
    got += part.length;
    onBytes?.(got, total);
  }
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob(parts as BlobPart[], { type: file.type }));
  link.download = file.name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
}

/** The record types the panel's forms offer, as options of a select. */
export const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SRV', 'CAA', 'NS'].map((t) => ({ value: t, label: t }));
