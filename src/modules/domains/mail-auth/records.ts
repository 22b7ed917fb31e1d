import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { type ZoneEntry, type StoredEntry } from '../records/repo.js';
import type { ZoneEdit } from '../zone/edit.js';

/** How long a retired DKIM key stays published after a rotation: mail signed with it still verifies. */
export const RETIRED_KEY_DAYS = 7;
const TTL = 3600;

export interface DkimKey {
  selector: string;
  /** The SubjectPublicKeyInfo, base64. */
  public_key: string;
}

export interface Dmarc {
  policy: 'none' | 'quarantine' | 'reject';
  rua: string | null;
}

/** `b<YYYYMMDDhhmm>` of `now`; `taken` ones get a letter, so two keys of a domain never share one. */
export function newSelector(now: Date, taken: string[]): string {
  const base = `b${now.toISOString().replace(/\D/g, '').slice(0, 12)}`;
  for (const suffix of ['', ...'abcdefghijklmnopqrstuvwxyz']) if (!taken.includes(base + suffix)) return base + suffix;
  throw new Error('no free DKIM selector this minute');
}

/** An RSA 2048 key pair off the event loop: the private key as PKCS#8 PEM, the public one as base64 DER. */
export async function newDkimKeyPair(): Promise<{ privateKeyPem: string; publicKey: string }> {
  const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKey: (publicKey as unknown as Buffer).toString('base64') };
}

export const dkimRecordName = (selector: string) => `${selector}._domainkey`;
export const dkimRecordContent = (key: DkimKey) => `v=DKIM1; k=rsa; p=${key.public_key}`;
/** `rua` holds bare addresses, comma-separated (normalizeRua): each is a `mailto:` URI in the record. */
export const dmarcRecordContent = (d: Dmarc) =>
  `v=DMARC1; p=${d.policy}${
    d.rua
      ? `; rua=${d.rua
          .split(',')
          .map((a) => `mailto:${a}`)
          .join(',')}`
      : ''
  }`;

/** A report address: nothing a TXT record could misread. */
const ADDRESS = /^[a-z0-9._%+-]{1,64}@(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
/** As DMARC guides write them: `mailto:` optional, a size limit (`!10m`, RFC 7489 §6.2) allowed. */
const REPORT_URI = /^(?:mailto:)?([^!\s]+)(![0-9]{1,10}[kmgt]?)?$/;
const MAX_REPORT_ADDRESSES = 5;

/**
 * DMARC's aggregate report addresses (`rua`) as a caller writes them: a bare address, a
 * `mailto:` URI, or several of either, comma-separated. Stored and shown as bare addresses
 * (`a@x.org,b@y.org`), so each form publishes the same record. Null when it is none of those.
 */
export function normalizeRua(value: string): string | null {
  const uris = value
    .toLowerCase()
    .split(',')
    .map((u) => u.trim());
  if (uris.length > MAX_REPORT_ADDRESSES) return null;
  const addresses = [];
  for (const uri of uris) {
    const m = REPORT_URI.exec(uri);
    if (!m || !ADDRESS.test(m[1] as string)) return null;
    addresses.push(`${m[1]}${m[2] ?? ''}`);
  }
  return addresses.join(',');
}

const isMailAuth = (e: ZoneEntry) =>
  e.managed === true && e.type === 'TXT' && (e.name === '_dmarc' || e.name.endsWith('._domainkey'));

/**
 * The zone's managed DKIM and DMARC records become exactly these (none: mail is off); the
 * owner's own records are left alone, and a record that stays is kept as it is.
 */
export function mailAuthEdit(entries: StoredEntry[], keys: DkimKey[], dmarc: Dmarc | null, pointer: string): ZoneEdit {
  const wanted: ZoneEntry[] = [
    ...keys.map((k) => ({
      name: dkimRecordName(k.selector),
      type: 'TXT',
      ttl: TTL,
      content: dkimRecordContent(k),
      managed: true,
    })),
    ...(dmarc ? [{ name: '_dmarc', type: 'TXT', ttl: TTL, content: dmarcRecordContent(dmarc), managed: true }] : []),
  ];
  const same = (a: ZoneEntry, b: ZoneEntry) => a.name === b.name && a.content === b.content;
  const stale = entries.filter((e) => isMailAuth(e) && !wanted.some((w) => same(w, e)));
  const fresh = wanted.filter((w) => !entries.some((e) => isMailAuth(e) && same(w, e)));
  return {
    entries: [...entries.filter((e) => !stale.includes(e)), ...fresh],
    changed: new Map(fresh.map((e) => [e, pointer])),
    removed: stale.map((e) => e.id),
  };
}

/** Two edits of one zone, one after the other (mail records, then mail authentication). */
export function bothEdits(first: ZoneEdit, then: (entries: StoredEntry[]) => ZoneEdit): ZoneEdit {
  const second = then(first.entries as StoredEntry[]);
  return {
    entries: second.entries,
    changed: new Map([...first.changed, ...second.changed]),
    removed: [...first.removed, ...second.removed],
  };
}
