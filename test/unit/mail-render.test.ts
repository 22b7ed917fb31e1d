import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  renderAuthDict,
  renderAutoresponderSieve,
  renderDkimTables,
  renderSenderLoginMap,
  renderPasswdFile,
  renderRecipientAccess,
  renderTransport,
  renderVirtualAliasMap,
  renderVirtualMailboxMap,
  type MailDomainSpec,
} from '../../src/provisioning/render/mail.js';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../fixtures/mail', name), 'utf8');

const HASH = '{ARGON2ID}$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$0123456789abcdefghijklmnopqrstuvwxyzABCDE';
const domain: MailDomainSpec = {
  name: 'example.org',
  root: '/srv/berth/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p/mail/example.org',
  // Deliberately unordered: rendering sorts by address.
  mailboxes: [
    {
      id: 'eml_01jd3x9v6ef8tb2q4w5n7k8m9q',
      address: 'support@example.org',
      passwordHash: HASH,
      quotaMb: 2048,
      loginAllowed: false,
      forwardTo: [],
      autoresponder: null,
    },
    {
      id: 'eml_01jd3x9v6ef8tb2q4w5n7k8m9r',
      address: 'info@example.org',
      passwordHash: HASH,
      quotaMb: 1024,
      loginAllowed: true,
      forwardTo: ['copy@example.net', 'archive@example.net'],
      autoresponder: null,
    },
  ],
  forwarders: [{ address: 'sales@example.org', destinations: ['alice@example.net', 'bob@example.com'] }],
  deferred: false,
  catchAll: null,
  dkim: null,
};

describe('mail renderers (golden files)', () => {
  it('renders the Dovecot passwd-file: hash, home, Maildir, quota, nologin for a mailbox that may not log in', () => {
    expect(renderPasswdFile(domain)).toBe(fixture('passwd'));
  });

  it("renders Dovecot's dict file: the hash (nologin for a mailbox that may not log in), then home, Maildir and quota as JSON", () => {
    expect(renderAuthDict(domain)).toBe(fixture('users.dict'));
  });

  it('renders virtual_mailbox_maps relative to the accounts directory', () => {
    expect(renderVirtualMailboxMap(domain, '/srv/berth/accounts')).toBe(fixture('virtual_mailbox_maps'));
  });

  it('renders virtual_alias_maps: forwarders and mailboxes that keep a copy', () => {
    expect(renderVirtualAliasMap(domain)).toBe(fixture('virtual_alias_maps'));
  });

  it('renders a catch-all last, with every mailbox mapped to itself first (Postfix tries @domain for all)', () => {
    expect(renderVirtualAliasMap({ ...domain, catchAll: 'sales@example.org' })).toBe(fixture('virtual_alias_maps-catch-all'));
  });

  it('renders who may send as what: a mailbox as itself, a forwarder as the mailboxes it leads to', () => {
    const spec = {
      ...domain,
      forwarders: [...domain.forwarders, { address: 'team@example.org', destinations: ['info@example.org', 'x@example.net'] }],
    };
    expect(renderSenderLoginMap(spec)).toBe(
      'info@example.org info@example.org\nsupport@example.org support@example.org\nteam@example.org info@example.org\n',
    );
  });

  it('defers every recipient of a domain frozen for a move (450: the sender tries again), and no other', () => {
    expect(renderRecipientAccess(domain)).toBe('');
    expect(renderRecipientAccess({ ...domain, deferred: true })).toBe(
      'example.org 450 4.2.1 This mailbox is moving to another server; try again shortly\n',
    );
  });

  it('relays a domain whose account moved to its new server, on the fleet’s port, and stops deferring it; no other', () => {
    expect(renderTransport(domain, 25)).toBe('');
    const relayed = { ...domain, deferred: true, relay: '127.0.0.12' };
    expect(renderTransport(relayed, 12525)).toBe('example.org smtp:[127.0.0.12]:12525\n');
    expect(renderRecipientAccess(relayed)).toBe('');
    expect(renderTransport({ ...domain, relay: '2001:db8::12' }, 25)).toBe('example.org smtp:[ipv6:2001:db8::12]:25\n');
    expect(() => renderTransport({ ...domain, relay: 'evil.example' }, 25)).toThrow(/not an IP address/);
  });

  it('renders OpenDKIM key and signing table lines for the signing key', () => {
    const tables = renderDkimTables(
      { ...domain, dkim: { selector: 'b202611241200', privateKeyPem: 'unused' } },
      '/keys/example.org.private',
    );
    expect(tables).toEqual({
      keyTable: 'b202611241200._domainkey.example.org example.org:b202611241200:/keys/example.org.private\n',
      signingTable: '*@example.org b202611241200._domainkey.example.org\n',
    });
    expect(renderDkimTables(domain, '/keys/x')).toEqual({ keyTable: '', signingTable: '' });
  });

  it('renders the autoresponder as a Sieve vacation inside its window, with strings escaped', () => {
    const sieve = renderAutoresponderSieve('info@example.org', {
      subject: 'Away "until" Monday',
      body: 'I am away.\nUrgent: call \\ the office.',
      startsAt: '2026-12-20T00:00:00.000Z',
      endsAt: '2027-01-04T09:30:00.000Z',
    });
    expect(sieve).toBe(fixture('autoresponder.sieve'));
    expect(renderAutoresponderSieve('a@example.org', { subject: 's', body: 'b', startsAt: null, endsAt: null })).toContain(
      '\nvacation :days 1 :addresses ["a@example.org"] :subject "s" "b";\n',
    );
  });

  it('refuses a path that the colon- and space-separated files cannot carry', () => {
    expect(() => renderPasswdFile({ ...domain, root: '/srv/my mail/example.org' })).toThrow(/whitespace or ':'/);
  });
});
