import { Type, type Static } from 'typebox';
import { Id, Nullable, PageQuery, ResourceMeta, StringEnum, SyncFields, Timestamp } from '../../http/schemas.js';
import { RECORD_TYPES } from '../../lib/record-types.js';

/** Domains as the API shows and takes them: each shape declared once (validator, type, document). */

const Status = StringEnum(['active', 'suspended'] as const);
export const RecordType = StringEnum(RECORD_TYPES, {
  examples: ['A'],
});
const DomainName = Type.String({
  minLength: 1,
  maxLength: 253,
  description: 'A-label or Unicode; stored as the lowercase A-label.',
});
export const DomainParam = Type.String({
  minLength: 1,
  maxLength: 253,
  description: "The domain's id or name (A-label or Unicode).",
});
const DmarcPolicy = StringEnum(['none', 'quarantine', 'reject'] as const, {
  description: 'What receivers do with mail that fails SPF and DKIM alignment. Default `none` (monitor only).',
});
const Serial = Type.Integer({ minimum: 1, maximum: 4294967295, format: 'int64', description: 'SOA serial, YYYYMMDDnn' });

export const Domain = Type.Object(
  {
    id: Id('dom'),
    name: Type.String({ maxLength: 253 }),
    unicode_name: Type.String({ maxLength: 253 }),
    account_id: Id('acc'),
    status: Status,
    nameservers: Type.Array(Type.String({ maxLength: 253 }), { maxItems: 20 }),
    dns: Type.Object({ serial: Serial, record_count: Type.Integer({ minimum: 0, maximum: 1_000_000, format: 'int32' }) }),
    mail_enabled: Type.Boolean(),
    dmarc: Type.Object(
      {
        policy: DmarcPolicy,
        rua: Nullable(
          Type.String({
            maxLength: 1400,
            description:
              'Where aggregate reports go: bare addresses, comma-separated, each published as a `mailto:` URI of `rua`.',
          }),
        ),
      },
      { description: 'The DMARC policy published as the managed `_dmarc` TXT record while mail is enabled.' },
    ),
    catch_all: Nullable(
      Type.String({ maxLength: 254, description: 'Where mail to unknown addresses of the domain goes; null: refused.' }),
    ),
    ...SyncFields(
      'Whether the DNS server serves the current zone; `error` with `sync_error` while applies fail (they are retried).',
    ),
    ...ResourceMeta,
  },
  { $id: 'Domain', description: 'A domain and its authoritative DNS zone.' },
);

export const CreateDomain = Type.Object(
  {
    account_id: Id('acc'),
    name: DomainName,
    mail_enabled: Type.Optional(Type.Boolean()),
    template: Type.Optional(
      StringEnum(['default', 'empty'] as const, { description: '`default`: web (and mail) records; `empty`: SOA and NS only.' }),
    ),
  },
  { additionalProperties: false },
);
export const DomainMutable = {
  mail_enabled: Type.Boolean({
    description:
      'Adds or removes MX, SPF and mail address records, and the managed DKIM (`<selector>._domainkey`, a new RSA 2048 key) and DMARC (`_dmarc`) records.',
  }),
  status: Status,
  dmarc: Type.Object(
    {
      policy: Type.Optional(DmarcPolicy),
      rua: Type.Optional(
        Nullable(
          Type.String({
            minLength: 3,
            maxLength: 1400,
            description:
              'Where aggregate reports go: an address (`dmarc@example.com`), a `mailto:` URI as DMARC guides write it (`mailto:dmarc@example.com`, a size limit `!10m` allowed), or up to 5 of either, comma-separated. Shown as bare addresses; null: none.',
          }),
        ),
      ),
    },
    { additionalProperties: false, description: 'Changes the `_dmarc` record (mail must be enabled, else 409).' },
  ),
  catch_all: Nullable(
    Type.String({
      minLength: 3,
      maxLength: 254,
      description:
        'Where mail to an address of the domain that does not exist goes: a mailbox or forwarder of this domain (422 otherwise); null: such mail is refused.',
    }),
  ),
};
export const DomainParams = Type.Object({ domain: DomainParam }, { additionalProperties: false });

export type Domain = Static<typeof Domain>;
export type CreateDomain = Static<typeof CreateDomain>;
export type DomainPatch = Partial<Static<ReturnType<typeof Type.Object<typeof DomainMutable>>>>;

export const DomainListQuery = Type.Object(
  {
    ...PageQuery,
    account_id: Type.Optional(Id('acc')),
    status: Type.Optional(Status),
    name: Type.Optional(DomainName),
    q: Type.Optional(Type.String({ maxLength: 253, description: 'Substring of the name, as A-label or Unicode.' })),
    updated_since: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);
export type DomainListQuery = Static<typeof DomainListQuery>;

export const DeleteDomainQuery = Type.Object(
  { cascade: Type.Optional(Type.Boolean({ default: false })) },
  { additionalProperties: false },
);

const Key = {
  selector: Type.String({ maxLength: 20 }),
  public_key: Type.String({ maxLength: 1000, description: 'The SubjectPublicKeyInfo, base64.' }),
  dns_record: Type.Object({
    name: Type.String({ maxLength: 300 }),
    type: StringEnum(['TXT'] as const),
    content: Type.String({ maxLength: 1100 }),
  }),
  created_at: Timestamp,
};
export const DomainDkim = Type.Object(
  {
    domain_id: Id('dom'),
    ...Key,
    previous: Nullable(
      Type.Object(
        { ...Key, retired_at: Timestamp, removed_after: Timestamp },
        { description: 'The key the last rotation retired, published until `removed_after` so mail it signed still verifies.' },
      ),
    ),
  },
  {
    $id: 'DomainDkim',
    description: "The domain's DKIM signing key (RSA 2048): its selector and the managed TXT record that publishes it.",
  },
);
export type DomainDkim = Static<typeof DomainDkim>;

export const domainSchemas = [Domain, DomainDkim];
