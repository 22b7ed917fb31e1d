import { createRoute, deleteRoute, getRoute, listRoute, reachOf, updateRoutes } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { CreateForwarder, CreateMailbox, ForwarderMutable, MailboxMutable, MailboxWriteOnly, MailListQuery } from './schemas.js';
import type { MailService } from './service.js';

/** Mailboxes at `/v1/emails` and forwarders at `/v1/email-forwarders`. */
export function mailRoutes(app: App, svc: MailService): void {
  mailboxRoutes(app, svc);
  forwarderRoutes(app, svc);
}

function mailboxRoutes(app: App, svc: MailService): void {
  const path = '/v1/emails';
  const tags = ['emails'];
  const reach = reachOf(svc.loadMailbox);

  listRoute(app, {
    path,
    tags,
    operationId: 'listEmails',
    summary: "List the caller's mailboxes",
    scope: 'emails:read',
    querystring: MailListQuery,
    item: 'Email',
    list: svc.listMailboxes,
  });

  createRoute(app, {
    path,
    tags,
    operationId: 'createEmail',
    summary: 'Create a mailbox',
    description:
      "The mailbox belongs to the account that owns the address's domain, which must be in the caller's reach (else 404) and have mail enabled (else 409 `invalid_state`). Either `password` or `generate_password: true`; a generated password is returned once. Without `quota_mb` the quota is the plan's `max_email_quota_mb`, or the account's remaining disk if that is less. `max_email_accounts` applies (403). An address already used by a mailbox or a forwarder is 409 `already_exists`.",
    scope: 'emails:write',
    body: CreateMailbox,
    response: 'EmailWithPassword',
    create: svc.createMailbox,
  });

  getRoute(app, {
    path,
    prefix: 'eml',
    tags,
    resource: 'Email',
    summary: 'Get a mailbox',
    scope: 'emails:read',
    reach,
    get: svc.getMailbox,
  });

  updateRoutes(app, {
    path,
    prefix: 'eml',
    tags,
    resource: 'Email',
    response: 'EmailWithPassword',
    noun: 'mailbox',
    scope: 'emails:write',
    reach,
    mutable: MailboxMutable,
    writeOnly: MailboxWriteOnly,
    description:
      'A new `password` (or `generate_password`, returned once) replaces the old one on the mail server; the old one stops working once `sync_state` is `in_sync` again. Raising `quota_mb` is checked against the plan and the remaining disk (403 `quota_exceeded`); lowering it never is.',
    update: svc.updateMailbox,
  });

  deleteRoute(app, {
    path,
    prefix: 'eml',
    tags,
    operationId: 'deleteEmail',
    summary: 'Delete a mailbox and its mail',
    description:
      'The login stops working and the Maildir with every message is removed once the mail server has applied the change. The catch-all of its domain cannot be deleted (409 `in_use`): change the catch-all first.',
    scope: 'emails:write',
    reach,
    remove: svc.removeMailbox,
  });
}

function forwarderRoutes(app: App, svc: MailService): void {
  const path = '/v1/email-forwarders';
  const tags = ['email-forwarders'];
  const reach = reachOf(svc.loadForwarder);

  listRoute(app, {
    path,
    tags,
    operationId: 'listEmailForwarders',
    summary: "List the caller's forwarders",
    scope: 'emails:read',
    querystring: MailListQuery,
    item: 'EmailForwarder',
    list: svc.listForwarders,
  });

  createRoute(app, {
    path,
    tags,
    operationId: 'createEmailForwarder',
    summary: 'Create a forwarder',
    description: 'Same rules as mailboxes for the address and its domain; the address must not be a mailbox (409).',
    scope: 'emails:write',
    body: CreateForwarder,
    response: 'EmailForwarder',
    create: svc.createForwarder,
  });

  getRoute(app, {
    path,
    prefix: 'fwd',
    tags,
    resource: 'EmailForwarder',
    summary: 'Get a forwarder',
    scope: 'emails:read',
    reach,
    get: svc.getForwarder,
  });

  updateRoutes(app, {
    path,
    prefix: 'fwd',
    tags,
    resource: 'EmailForwarder',
    noun: 'forwarder',
    scope: 'emails:write',
    reach,
    mutable: ForwarderMutable,
    update: svc.updateForwarder,
  });

  deleteRoute(app, {
    path,
    prefix: 'fwd',
    tags,
    operationId: 'deleteEmailForwarder',
    summary: 'Delete a forwarder',
    description:
      'Mail to the address is no longer forwarded once the mail server has applied the change. The catch-all of its domain cannot be deleted (409 `in_use`).',
    scope: 'emails:write',
    reach,
    remove: svc.removeForwarder,
  });
}
