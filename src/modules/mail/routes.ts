import { resourceRoutes } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { CreateForwarder, CreateMailbox, ForwarderMutable, MailboxMutable, MailboxWriteOnly, MailListQuery } from './schemas.js';
import type { MailService } from './service.js';

/** Mailboxes at `/v1/emails` and forwarders at `/v1/email-forwarders`. */
export function mailRoutes(app: App, svc: MailService): void {
  mailboxRoutes(app, svc);
  forwarderRoutes(app, svc);
}

function mailboxRoutes(app: App, svc: MailService): void {
  resourceRoutes(app, {
    path: '/v1/emails',
    prefix: 'eml',
    tags: ['emails'],
    resource: 'Email',
    area: 'emails',
    load: svc.loadMailbox,
    list: {
      operationId: 'listEmails',
      summary: "List the caller's mailboxes",
      querystring: MailListQuery,
      list: svc.listMailboxes,
    },
    create: {
      operationId: 'createEmail',
      summary: 'Create a mailbox',
      description:
        "The mailbox belongs to the account that owns the address's domain, which must be in the caller's reach (else 404) and have mail enabled (else 409 `invalid_state`). Either `password` or `generate_password: true`; a generated password is returned once. Without `quota_mb` the quota is the plan's `max_email_quota_mb`, or the account's remaining disk if that is less. `max_email_accounts` applies (403). An address already used by a mailbox or a forwarder is 409 `already_exists`.",
      body: CreateMailbox,
      response: 'EmailWithPassword',
      create: svc.createMailbox,
    },
    get: {
      summary: 'Get a mailbox',
      get: svc.getMailbox,
    },
    update: {
      response: 'EmailWithPassword',
      noun: 'mailbox',
      mutable: MailboxMutable,
      writeOnly: MailboxWriteOnly,
      description:
        'A new `password` (or `generate_password`, returned once) replaces the old one on the mail server; the old one stops working once `sync_state` is `in_sync` again. Raising `quota_mb` is checked against the plan and the remaining disk (403 `quota_exceeded`); lowering it never is.',
      update: svc.updateMailbox,
    },
    remove: {
      operationId: 'deleteEmail',
      summary: 'Delete a mailbox and its mail',
      description:
        'The login stops working and the Maildir with every message is removed once the mail server has applied the change. The catch-all of its domain cannot be deleted (409 `in_use`): change the catch-all first.',
      remove: svc.removeMailbox,
    },
  });
}

function forwarderRoutes(app: App, svc: MailService): void {
  resourceRoutes(app, {
    path: '/v1/email-forwarders',
    prefix: 'fwd',
    tags: ['email-forwarders'],
    resource: 'EmailForwarder',
    area: 'emails',
    load: svc.loadForwarder,
    list: {
      operationId: 'listEmailForwarders',
      summary: "List the caller's forwarders",
      querystring: MailListQuery,
      list: svc.listForwarders,
    },
    create: {
      operationId: 'createEmailForwarder',
      summary: 'Create a forwarder',
      description: 'Same rules as mailboxes for the address and its domain; the address must not be a mailbox (409).',
      body: CreateForwarder,
      response: 'EmailForwarder',
      create: svc.createForwarder,
    },
    get: {
      summary: 'Get a forwarder',
      get: svc.getForwarder,
    },
    update: {
      noun: 'forwarder',
      mutable: ForwarderMutable,
      update: svc.updateForwarder,
    },
    remove: {
      operationId: 'deleteEmailForwarder',
      summary: 'Delete a forwarder',
      description:
        'Mail to the address is no longer forwarded once the mail server has applied the change. The catch-all of its domain cannot be deleted (409 `in_use`).',
      remove: svc.removeForwarder,
    },
  });
}
