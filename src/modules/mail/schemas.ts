import { Type, type Static, type TSchema } from 'typebox';
import { Id, Nullable, PageQuery, ResourceMeta, StringEnum, SyncFields, Timestamp } from '../../http/schemas.js';

/**
 * Mailboxes and forwarders as the API shows and takes them: each shape is declared here once
 * and is the validator, the TypeScript type (`Static`) and the OpenAPI document. At the HTTP
 * edge a mailbox is an `Email` (`/v1/emails`), the name its first clients were written against.
 */

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
const MailSync = SyncFields(
  "Whether the mail server has the current state of the domain's addresses; `error` with `sync_error` while applies fail (they are retried).",
);

const autoresponderFields = {
  enabled: Type.Boolean(),
  subject: Type.String({ maxLength: 255, description: 'One line; required when enabled.' }),
  body: Type.String({ maxLength: 10_000, description: 'Required when enabled.' }),
  starts_at: Nullable(Timestamp),
  ends_at: Nullable(Timestamp),
};
const autoresponderDescription =
  'An automatic reply (a Sieve `vacation`, at most one per sender per day), sent only between `starts_at` and `ends_at` when they are set.';
export const Autoresponder = Type.Object(autoresponderFields, { description: autoresponderDescription });
export type Autoresponder = Static<typeof Autoresponder>;
const AutoresponderInput = Type.Object(
  Object.fromEntries(Object.entries(autoresponderFields).map(([k, v]) => [k, Type.Optional(v as TSchema)])) as {
    [K in keyof typeof autoresponderFields]: ReturnType<typeof Type.Optional<(typeof autoresponderFields)[K]>>;
  },
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

const mailboxFields = {
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
  ...MailSync,
  ...ResourceMeta,
};
export const Mailbox = Type.Object(mailboxFields, { $id: 'Email', description: 'A mailbox (IMAP login, Maildir, quota).' });
export type Mailbox = Static<typeof Mailbox>;

export const MailboxWithPassword = Type.Object(
  {
    ...mailboxFields,
    password: Type.Optional(Type.String({ maxLength: 100, description: 'A generated password; in this response only.' })),
  },
  { $id: 'EmailWithPassword', description: 'A mailbox, with its generated password when one was asked for.' },
);
export type MailboxWithPassword = Static<typeof MailboxWithPassword>;

export const Forwarder = Type.Object(
  {
    id: Id('fwd'),
    address: Type.String({ maxLength: 254 }),
    domain_id: Id('dom'),
    account_id: Id('acc'),
    destinations: Destinations('Where mail to the address goes.', 1),
    ...MailSync,
    ...ResourceMeta,
  },
  { $id: 'EmailForwarder', description: 'An address without a mailbox: mail to it is forwarded.' },
);
export type Forwarder = Static<typeof Forwarder>;

export const MailListQuery = Type.Object(
  {
    ...PageQuery,
    account_id: Type.Optional(Id('acc')),
    domain: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: "The domain's id or name." })),
    q: Type.Optional(Type.String({ maxLength: 254, description: 'Substring of the address.' })),
  },
  { additionalProperties: false },
);
export type MailListQuery = Static<typeof MailListQuery>;

export const CreateMailbox = Type.Object(
  {
    address: AddressInput,
    password: Type.Optional(Password),
    generate_password: Type.Optional(GeneratePassword),
    quota_mb: Type.Optional(QuotaMb),
    forward_to: Type.Optional(Destinations('Addresses that also receive a copy of every message.')),
    autoresponder: Type.Optional(AutoresponderInput),
  },
  { additionalProperties: false },
);
export type CreateMailbox = Static<typeof CreateMailbox>;

/** What PUT requires and PATCH may change of a mailbox. */
export const MailboxMutable = {
  quota_mb: QuotaMb,
  status: Status,
  forward_to: Destinations('Addresses that also receive a copy.'),
  autoresponder: AutoresponderInput,
};
export const MailboxWriteOnly = { password: Password, generate_password: GeneratePassword };
/** A PUT or PATCH of a mailbox as the service takes it: every field optional. */
export type MailboxPatch = Partial<Static<ReturnType<typeof Type.Object<typeof MailboxMutable & typeof MailboxWriteOnly>>>>;

const ForwarderDestinations = Destinations('Where mail to the address goes (1-50 addresses).', 1);
export const CreateForwarder = Type.Object(
  { address: AddressInput, destinations: ForwarderDestinations },
  { additionalProperties: false },
);
export type CreateForwarder = Static<typeof CreateForwarder>;
export const ForwarderMutable = { destinations: ForwarderDestinations };
export type ForwarderPatch = Partial<Static<ReturnType<typeof Type.Object<typeof ForwarderMutable>>>>;

export const mailSchemas = [Mailbox, MailboxWithPassword, Forwarder];
