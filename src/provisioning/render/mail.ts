import { isIP } from 'node:net';
import path from 'node:path';
import { type Static, Type } from 'typebox';

/**
 * A mail domain's apply unit as the mail server needs it, and the pure functions that render
 * it: Dovecot's users (a dict file, and the same as a passwd-file), the Postfix lookup tables, and a Sieve
 * script per mailbox with an autoresponder. Drivers write these; they never see a password.
 */
// As the API takes them (an external destination may be up to 320 characters).
const Address = Type.String({ minLength: 3, maxLength: 320 });

const MailboxSpec = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  address: Address,
  /** `{ARGON2ID}...`: what Dovecot verifies. */
  passwordHash: Type.String({ minLength: 1, maxLength: 500 }),
  quotaMb: Type.Integer({ minimum: 0, maximum: 10_000_000 }),
  /** False while the mailbox, its domain or its account is suspended. */
  loginAllowed: Type.Boolean(),
  forwardTo: Type.Array(Address, { maxItems: 100 }),
  autoresponder: Type.Union([
    Type.Object({
      subject: Type.String({ maxLength: 1000 }),
      body: Type.String({ maxLength: 100_000 }),
      startsAt: Type.Union([Type.String({ maxLength: 40 }), Type.Null()]),
      endsAt: Type.Union([Type.String({ maxLength: 40 }), Type.Null()]),
    }),
    Type.Null(),
  ]),
});
type MailboxSpec = Static<typeof MailboxSpec>;

/** A mail domain's content: every field but where its mailboxes live, which each server decides. */
export const MailDomainContent = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 253 }),
  mailboxes: Type.Array(MailboxSpec, { maxItems: 100_000 }),
  forwarders: Type.Array(Type.Object({ address: Address, destinations: Type.Array(Address, { minItems: 1, maxItems: 100 }) }), {
    maxItems: 100_000,
  }),
  /**
   * Mail to the domain is deferred at SMTP (450, the sender tries again later) while its account
   * is frozen for a move: nothing arrives at a server after its copy was made.
   */
  deferred: Type.Boolean(),
  /**
   * The account moved to the mail server at this address (optional: null): mail to the domain is
   * relayed there (a Postfix transport), taken and queued here whatever else holds, while the
   * records that still name this server may be cached.
   */
  relay: Type.Optional(Type.Union([Type.String({ minLength: 2, maxLength: 45 }), Type.Null()])),
  /** Where mail to an unknown address of the domain goes; null: refused. */
  catchAll: Type.Union([Address, Type.Null()]),
  /** The key outgoing mail of the domain is signed with (OpenDKIM); null: none. */
  dkim: Type.Union([
    Type.Object({ selector: Type.String({ pattern: '^[a-z0-9-]{1,63}$' }), privateKeyPem: Type.String({ maxLength: 20_000 }) }),
    Type.Null(),
  ]),
});

export type MailDomainContent = Static<typeof MailDomainContent>;

export type MailDomainSpec = MailDomainContent & {
  /** Where this domain's mailboxes live: `<root>/<mailbox id>/Maildir`. */
  root: string;
};

export const mailboxHome = (domain: MailDomainSpec, mailbox: Pick<MailboxSpec, 'id'>) => path.join(domain.root, mailbox.id);

const byAddress = <T extends { address: string }>(items: T[]) => [...items].sort((a, b) => a.address.localeCompare(b.address));

/** A value that a space- or colon-separated file cannot carry is refused, never written broken. */
function fieldSafe(value: string, what: string): string {
  if (/[\s:]/.test(value)) throw new Error(`${what} "${value}" contains whitespace or ':', which the mail maps cannot carry`);
  return value;
}

/**
 * `user:password:uid:gid:gecos:home:shell:extra_fields`. uid/gid are left to Dovecot's
 * `mail_uid`/`mail_gid`; the quota is a userdb field; a mailbox that may not log in keeps its
 * line (mail is still delivered) with `nologin=y`, so the right password is refused too.
 */
export function renderPasswdFile(domain: MailDomainSpec): string {
  return byAddress(domain.mailboxes)
    .map((m) => {
      const home = fieldSafe(mailboxHome(domain, m), 'mailbox home');
      const extra = [`userdb_mail=maildir:${home}/Maildir`, `userdb_quota_rule=*:storage=${m.quotaMb}M`];
      if (!m.loginAllowed) extra.push('nologin=y');
      return `${m.address}:${fieldSafe(m.passwordHash, 'password hash')}::::${home}::${extra.join(' ')}\n`;
    })
    .join('');
}

/**
 * Dovecot's dict passdb and userdb over a flat file (`uri = file:<path>`): a line with the key,
 * a line with its JSON value. `shared/passdb/<address>` holds the hash (and `nologin` while the
 * mailbox may not log in; its mail is still delivered), `shared/userdb/<address>` the home, the
 * Maildir and the quota. Dovecot looks at this file at every lookup and reads it again once it
 * is another file (each write renames a new one over it), so a change counts at the very next
 * login; a passwd-file is looked at no more than once a second.
 */
export function renderAuthDict(domain: MailDomainSpec): string {
  return byAddress(domain.mailboxes)
    .map((m) => {
      const address = fieldSafe(m.address, 'address');
      const home = mailboxHome(domain, m);
      const passdb = { password: m.passwordHash, ...(m.loginAllowed ? {} : { nologin: 'y' }) };
      const userdb = { home, mail: `maildir:${home}/Maildir`, quota_rule: `*:storage=${m.quotaMb}M` };
      return `shared/passdb/${address}\n${JSON.stringify(passdb)}\nshared/userdb/${address}\n${JSON.stringify(userdb)}\n`;
    })
    .join('');
}

/** `virtual_mailbox_maps`: each mailbox and its Maildir, relative to the accounts directory (`virtual_mailbox_base`). */
export function renderVirtualMailboxMap(domain: MailDomainSpec, accountsDir: string): string {
  return byAddress(domain.mailboxes)
    .map((m) => `${m.address} ${fieldSafe(path.relative(accountsDir, mailboxHome(domain, m)), 'mailbox path')}/Maildir/\n`)
    .join('');
}

/**
 * `virtual_alias_maps`: forwarders, and mailboxes that keep a copy and forward one (`a@x a@x,
 * b@y`). A catch-all is `@domain target`; Postfix tries it for every address of the domain, so
 * each mailbox then maps to itself first (or its mail would go to the catch-all too).
 */
export function renderVirtualAliasMap(domain: MailDomainSpec): string {
  const lines = [
    ...domain.mailboxes
      .filter((m) => m.forwardTo.length || domain.catchAll)
      .map((m) => ({ address: m.address, to: [m.address, ...m.forwardTo] })),
    ...domain.forwarders.map((f) => ({ address: f.address, to: f.destinations })),
  ];
  const catchAll = domain.catchAll ? `@${domain.name} ${fieldSafe(domain.catchAll, 'catch-all')}\n` : '';
  return (
    byAddress(lines)
      .map((l) => `${l.address} ${l.to.join(', ')}\n`)
      .join('') + catchAll
  );
}

/** `check_recipient_access` (a Postfix `hash:` table): a deferred domain answers 450 to every recipient. */
export const renderRecipientAccess = (domain: MailDomainSpec): string =>
  domain.deferred && !domain.relay
    ? `${domain.name} 450 4.2.1 This mailbox is moving to another server; try again shortly\n`
    : '';

/**
 * `transport_maps` (a Postfix `hash:` table): a relayed domain's mail goes to the SMTP service
 * of the server at its address, on `port` (the servers of a fleet receive mail on the same port).
 */
export function renderTransport(domain: MailDomainSpec, port: number): string {
  if (!domain.relay) return '';
  const family = isIP(domain.relay);
  if (!family) throw new Error(`"${domain.relay}" is not an IP address to relay to`);
  return `${domain.name} smtp:[${family === 6 ? `ipv6:${domain.relay}` : domain.relay}]:${port}\n`;
}

/**
 * `smtpd_sender_login_maps`: who may send as an address on the submission service — a mailbox
 * as itself, a forwarder as the mailboxes of the domain it leads to (SASL logins are addresses).
 */
export function renderSenderLoginMap(domain: MailDomainSpec): string {
  const boxes = new Set(domain.mailboxes.map((m) => m.address));
  const lines = [
    ...domain.mailboxes.map((m) => ({ address: m.address, owners: [m.address] })),
    ...domain.forwarders.map((f) => ({ address: f.address, owners: f.destinations.filter((d) => boxes.has(d)) })),
  ].filter((l) => l.owners.length);
  return byAddress(lines)
    .map((l) => `${l.address} ${l.owners.join(',')}\n`)
    .join('');
}

/** OpenDKIM's KeyTable line (`<selector>._domainkey.<domain> <domain>:<selector>:<key file>`) and SigningTable line (`*@<domain> …`). */
export function renderDkimTables(domain: MailDomainSpec, keyFile: string): { keyTable: string; signingTable: string } {
  if (!domain.dkim) return { keyTable: '', signingTable: '' };
  const id = `${fieldSafe(domain.dkim.selector, 'selector')}._domainkey.${domain.name}`;
  return {
    keyTable: `${id} ${domain.name}:${domain.dkim.selector}:${fieldSafe(keyFile, 'key file')}\n`,
    signingTable: `*@${domain.name} ${id}\n`,
  };
}

/** A Sieve quoted string (RFC 5228 §2.4.2): backslash and double quote escaped. */
const sieveString = (s: string) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/** `2026-11-21T10:00:00.000Z` → `2026-11-21T10:00:00+00:00`, the form `currentdate :zone "+0000" "iso8601"` compares against. */
const sieveTime = (iso: string) => `${new Date(iso).toISOString().slice(0, 19)}+00:00`;

/** The autoresponder as a Sieve `vacation` (RFC 5230), answering only inside its date window. */
export function renderAutoresponderSieve(address: string, r: NonNullable<MailboxSpec['autoresponder']>): string {
  const window = [
    ...(r.startsAt ? [`currentdate :zone "+0000" :value "ge" "iso8601" ${sieveString(sieveTime(r.startsAt))}`] : []),
    ...(r.endsAt ? [`currentdate :zone "+0000" :value "lt" "iso8601" ${sieveString(sieveTime(r.endsAt))}`] : []),
  ];
  const vacation = `vacation :days 1 :addresses [${sieveString(address)}] :subject ${sieveString(r.subject)} ${sieveString(r.body)};`;
  const body = window.length ? `if allof(${window.join(', ')}) {\n  ${vacation}\n}\n` : `${vacation}\n`;
  return `# Autoresponder of ${address}, rendered by Berth.\nrequire ["vacation", "date", "relational"];\n${body}`;
}
