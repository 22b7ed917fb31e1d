import { Type, type TSchema } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { deleteRoute, getRoute, listRoute, reachOf, updateRoutes } from '../../http/crud.js';
import { sendCreated, type App } from '../../http/routes.js';
import { Id, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';
import type { EmailsService } from './service.js';

const Status = StringEnum(['active', 'suspended'] as const, {
  description: '`suspended`: logins are refused (mail is still delivered).',
});
const AddressInput = Type.String({
  minLength: 3,
  maxLength: 320,
  description: '`local@domain`; the domain may be Unicode. Stored lowercase with the A-label domain.',
});
const Destinations = (description: string, minItems = 0) =>
  Type.Array(Type.String({ minLength: 3, maxLength: 320 }), { minItems, maxItems: 50, description });
const SyncFields = {
  sync_state: StringEnum(['pending', 'in_sync', 'error'] as const, {
    description:
      "Whether the mail server has the current state of the domain's addresses; `error` with `sync_error` while applies fail (they are retried).",
  }),
  sync_error: Nullable(Type.String({ maxLength: 1000 })),
};

const autoresponderFields = {
  enabled: Type.Boolean(),
  subject: Type.String({ maxLength: 255, description: 'One line; required when enabled.' }),
  body: Type.String({ maxLength: 10_000, description: 'Required when enabled.' }),
  starts_at: Nullable(Timestamp),
  ends_at: Nullable(Timestamp),
};
const autoresponderDescription =
  'An automatic reply (a Sieve `vacation`, at most one per sender per day), sent only between `starts_at` and `ends_at` when they are set.';
const Autoresponder = Type.Object(autoresponderFields, { description: autoresponderDescription });
const AutoresponderInput = Type.Object(
  Object.fromEntries(Object.entries(autoresponderFields).map(([k, v]) => [k, Type.Optional(v as TSchema)])),
  { additionalProperties: false, description: autoresponderDescription },
);

const Password = Type.String({
  minLength: 1,
  maxLength: 1024,
  writeOnly: true,
  description: 'At least 12 characters, no control characters. Write-only: stored as an `{ARGON2ID}` hash.',
});
const GeneratePassword = Type.Boolean({ description: 'Generate a 24-character password, returned once in this response.' });
const QuotaMb = Type.Integer({
  minimum: 1,
  maximum: 4_194_304,
  format: 'int32',
  description: "At most the plan's `max_email_quota_mb`, and no more than the account's remaining disk.",
});

const emailFields = {
  id: Id('eml'),
  address: Type.String({ maxLength: 254 }),
  domain_id: Id('dom'),
  account_id: Id('acc'),
  quota_mb: QuotaMb,
  usage_bytes: Type.Integer({
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    format: 'int64',
    description: 'Measured from the Maildir.',
  }),
  status: Status,
  forward_to: Destinations('Addresses that also receive a copy of every message.'),
  autoresponder: Autoresponder,
  ...SyncFields,
  ...ResourceMeta,
};
const Email = Type.Object(emailFields, { $id: 'Email', description: 'A mailbox (IMAP login, Maildir, quota).' });
const EmailWithPassword = Type.Object(
  {
    ...emailFields,
    password: Type.Optional(Type.String({ maxLength: 100, description: 'A generated password; in this response only.' })),
  },
  { $id: 'EmailWithPassword', description: 'A mailbox, with its generated password when one was asked for.' },
);
const Forwarder = Type.Object(
  {
    id: Id('fwd'),
    address: Type.String({ maxLength: 254 }),
    domain_id: Id('dom'),
    account_id: Id('acc'),
    destinations: Destinations('Where mail to the address goes.', 1),
    ...SyncFields,
    ...ResourceMeta,
  },
  { $id: 'EmailForwarder', description: 'An address without a mailbox: mail to it is forwarded.' },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    account_id: Type.Optional(Id('acc')),
    domain: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: "The domain's id or name." })),
    q: Type.Optional(Type.String({ maxLength: 254, description: 'Substring of the address.' })),
  },
  { additionalProperties: false },
);

export function emailRoutes(app: App, svc: EmailsService): void {
  const tags = ['emails'];
  const reach = reachOf(svc.loadEmail);

  listRoute(app, {
    path: '/v1/emails',
    tags,
    operationId: 'listEmails',
    summary: "List the caller's mailboxes",
    scope: 'emails:read',
    querystring: ListQuery,
    item: 'Email',
    list: svc.listEmails,
  });

  app.post(
    '/v1/emails',
    {
      config: { scope: 'emails:write' },
      schema: {
        tags,
        operationId: 'createEmail',
        summary: 'Create a mailbox',
        description:
          "The mailbox belongs to the account that owns the address's domain, which must be in the caller's reach (else 404) and have mail enabled (else 409 `invalid_state`). Either `password` or `generate_password: true`; a generated password is returned once. Without `quota_mb` the quota is the plan's `max_email_quota_mb`, or the account's remaining disk if that is less. `max_email_accounts` applies (403). An address already used by a mailbox or a forwarder is 409 `already_exists`.",
        body: Type.Object(
          {
            address: AddressInput,
            password: Type.Optional(Password),
            generate_password: Type.Optional(GeneratePassword),
            quota_mb: Type.Optional(QuotaMb),
            forward_to: Type.Optional(Destinations('Addresses that also receive a copy of every message.')),
            autoresponder: Type.Optional(AutoresponderInput),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('EmailWithPassword') },
      },
    },
    async (req, reply) => sendCreated(reply, '/v1/emails', await svc.createEmail(callerOf(req), req.body)),
  );

  getRoute(app, {
    path: '/v1/emails',
    prefix: 'eml',
    tags,
    resource: 'Email',
    summary: 'Get a mailbox',
    scope: 'emails:read',
    reach,
    get: svc.getEmail,
  });

  updateRoutes(app, {
    path: '/v1/emails',
    prefix: 'eml',
    tags,
    resource: 'Email',
    response: 'EmailWithPassword',
    noun: 'mailbox',
    scope: 'emails:write',
    reach,
    mutable: {
      quota_mb: QuotaMb,
      status: Status,
      forward_to: Destinations('Addresses that also receive a copy.'),
      autoresponder: AutoresponderInput,
    },
    writeOnly: { password: Password, generate_password: GeneratePassword },
    description:
      'A new `password` (or `generate_password`, returned once) replaces the old one on the mail server; the old one stops working once `sync_state` is `in_sync` again. Raising `quota_mb` is checked against the plan and the remaining disk (403 `quota_exceeded`); lowering it never is.',
    update: svc.updateEmail,
  });

  deleteRoute(app, {
    path: '/v1/emails',
    prefix: 'eml',
    tags,
    operationId: 'deleteEmail',
    summary: 'Delete a mailbox and its mail',
    scope: 'emails:write',
    reach,
    remove: svc.removeEmail,
  });

  forwarderRoutes(app, svc);
}

function forwarderRoutes(app: App, svc: EmailsService): void {
  const tags = ['email-forwarders'];
  const reach = reachOf(svc.loadForwarder);
  const destinations = Destinations('Where mail to the address goes (1-50 addresses).', 1);

  listRoute(app, {
    path: '/v1/email-forwarders',
    tags,
    operationId: 'listEmailForwarders',
    summary: "List the caller's forwarders",
    scope: 'emails:read',
    querystring: ListQuery,
    item: 'EmailForwarder',
    list: svc.listForwarders,
  });

  app.post(
    '/v1/email-forwarders',
    {
      config: { scope: 'emails:write' },
      schema: {
        tags,
        operationId: 'createEmailForwarder',
        summary: 'Create a forwarder',
        description: 'Same rules as mailboxes for the address and its domain; the address must not be a mailbox (409).',
        body: Type.Object({ address: AddressInput, destinations }, { additionalProperties: false }),
        response: { 201: Type.Ref('EmailForwarder') },
      },
    },
    async (req, reply) => sendCreated(reply, '/v1/email-forwarders', await svc.createForwarder(callerOf(req), req.body)),
  );

  getRoute(app, {
    path: '/v1/email-forwarders',
    prefix: 'fwd',
    tags,
    resource: 'EmailForwarder',
    summary: 'Get a forwarder',
    scope: 'emails:read',
    reach,
    get: svc.getForwarder,
  });

  updateRoutes(app, {
    path: '/v1/email-forwarders',
    prefix: 'fwd',
    tags,
    resource: 'EmailForwarder',
    noun: 'forwarder',
    scope: 'emails:write',
    reach,
    mutable: { destinations },
    update: svc.updateForwarder,
  });

  deleteRoute(app, {
    path: '/v1/email-forwarders',
    prefix: 'fwd',
    tags,
    operationId: 'deleteEmailForwarder',
    summary: 'Delete a forwarder',
    scope: 'emails:write',
    reach,
    remove: svc.removeForwarder,
  });
}

export const emailSchemas = [Email, EmailWithPassword, Forwarder];
