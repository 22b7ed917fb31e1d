import { parseDomainName } from '../../lib/domain-name.js';
import type { FieldError } from '../../lib/errors.js';
import type { Autoresponder } from './schemas.js';

/** The rules for mailboxes and forwarders as pure functions returning field errors. */

// RFC 5321 §4.1.2 Dot-string: atoms of atext joined by single dots.
const ATEXT = "[a-z0-9!#$%&'*+/=?^_`{|}~-]";
const DOT_ATOM = new RegExp(`^${ATEXT}+(\\.${ATEXT}+)*$`);

export interface ParsedAddress {
  local: string;
  /** The domain as an A-label. */
  domain: string;
  address: string;
}

const err = (pointer: string, code: string, detail: string): FieldError => ({ pointer, code, detail });

/**
 * `local@domain`, lowercased; the domain may be Unicode (stored as its A-label). The local
 * part is an RFC 5321 dot-atom of at most 64 octets. A leading `#` is refused too: it would
 * turn the address's line in the passwd-file and the Postfix maps into a comment.
 */
export function parseAddress(raw: string, pointer: string): ParsedAddress | FieldError {
  const at = raw.lastIndexOf('@');
  if (at <= 0) return err(pointer, 'invalid_address', 'must be local@domain');
  const local = raw.slice(0, at).toLowerCase();
  const domain = parseDomainName(raw.slice(at + 1));
  if (!domain.ok) return err(pointer, 'invalid_domain', `the domain ${domain.detail}`);
  if (Buffer.byteLength(local) > 64) return err(pointer, 'local_part_too_long', 'the local part must be at most 64 octets');
  if (!DOT_ATOM.test(local))
    return err(
      pointer,
      'invalid_local_part',
      "the local part must be a dot-atom (RFC 5321): letters, digits and !#$%&'*+/=?^_`{|}~- between single dots",
    );
  if (local.startsWith('#')) return err(pointer, 'invalid_local_part', 'the local part must not start with #');
  const address = `${local}@${domain.ascii}`;
  if (address.length > 254) return err(pointer, 'too_long', 'the address must be at most 254 characters');
  return { local, domain: domain.ascii, address };
}

export const isFieldError = (v: unknown): v is FieldError => typeof v === 'object' && v !== null && 'pointer' in v;

const MIN_PASSWORD_LENGTH = 12;

/** At least 12 characters, no control characters, not the address itself. */
export function passwordErrors(password: string, address: string, pointer = '/password'): FieldError[] {
  if ([...password].length < MIN_PASSWORD_LENGTH)
    return [err(pointer, 'too_short', `must be at least ${MIN_PASSWORD_LENGTH} characters`)];
  if (/[\u0000-\u001f\u007f]/.test(password)) return [err(pointer, 'invalid_characters', 'must not contain control characters')];
  if (password.toLowerCase() === address || password.toLowerCase() === address.split('@')[0])
    return [err(pointer, 'too_weak', 'must not be the address or its local part')];
  return [];
}

/** Destinations (forward_to, a forwarder's): valid, lowercased, without duplicates or the address itself. */
export function destinationErrors(
  list: string[],
  self: string,
  pointer: string,
): { destinations: string[]; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const out: string[] = [];
  list.forEach((raw, i) => {
    const parsed = parseAddress(raw, `${pointer}/${i}`);
    if (isFieldError(parsed)) return errors.push(parsed);
    if (parsed.address === self) return errors.push(err(`${pointer}/${i}`, 'self', 'must not be the address itself'));
    if (out.includes(parsed.address)) return errors.push(err(`${pointer}/${i}`, 'duplicate', 'is listed twice'));
    out.push(parsed.address);
  });
  return { destinations: out, errors };
}

export const NO_AUTORESPONDER: Autoresponder = { enabled: false, subject: '', body: '', starts_at: null, ends_at: null };

/** An enabled autoresponder needs a subject and a body; its window, if bounded on both sides, must not be empty. */
export function autoresponderErrors(a: Autoresponder, pointer = '/autoresponder'): FieldError[] {
  const errors: FieldError[] = [];
  if (a.enabled && !a.subject.trim()) errors.push(err(`${pointer}/subject`, 'required', 'is required when enabled'));
  if (a.enabled && !a.body.trim()) errors.push(err(`${pointer}/body`, 'required', 'is required when enabled'));
  // The subject becomes a header line: no line breaks or other control characters.
  if (/[\u0000-\u001f\u007f]/.test(a.subject))
    errors.push(err(`${pointer}/subject`, 'invalid_characters', 'must not contain control characters'));
  if (a.starts_at && a.ends_at && Date.parse(a.ends_at) <= Date.parse(a.starts_at))
    errors.push(err(`${pointer}/ends_at`, 'before_start', 'must be after starts_at'));
  return errors;
}

/** Timestamps are stored in the API's form: RFC 3339 UTC with milliseconds. */
export function normalizeAutoresponder(a: Partial<Autoresponder>): Autoresponder {
  const at = (v: string | null | undefined) => (v ? new Date(v).toISOString() : null);
  return {
    enabled: a.enabled ?? false,
    subject: a.subject ?? '',
    body: a.body ?? '',
    starts_at: at(a.starts_at),
    ends_at: at(a.ends_at),
  };
}
