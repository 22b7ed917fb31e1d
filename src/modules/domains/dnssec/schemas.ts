import { type Static, Type } from 'typebox';
import { Failure, Id, Nullable, StringEnum, Timestamp } from '../../../http/schemas.js';

/** DNSSEC as the API shows it: each shape declared once (validator, type, document). */

const Algorithm = Type.Unsafe<13 | 15 | 8>({
  type: 'integer',
  format: 'int32',
  minimum: 8,
  maximum: 15,
  enum: [13, 15, 8],
  description: '13 ECDSAP256SHA256 (the default), 15 ED25519, 8 RSASHA256 (2048 bits).',
});
const Denial = StringEnum(['nsec', 'nsec3'] as const, {
  description: 'Denial of existence: NSEC, or NSEC3 as RFC 9276 has it (no salt, no extra iterations; the only NSEC3 served).',
});
const Uint16 = Type.Integer({ minimum: 0, maximum: 65535, format: 'int32' });

const DnssecKey = Type.Object({
  id: Id('dnk'),
  role: StringEnum(['csk', 'ksk', 'zsk'] as const, { description: 'A combined signing key signs the key set and the zone.' }),
  flags: Uint16,
  key_tag: Uint16,
  algorithm: Algorithm,
  dnskey: Type.String({ maxLength: 2000, description: 'The DNSKEY record in presentation format.' }),
  active: Type.Boolean(),
  published: Type.Boolean(),
  created_at: Timestamp,
});

const DsRecord = Type.Object({
  key_tag: Uint16,
  algorithm: Algorithm,
  digest_type: Type.Literal(2, { description: 'SHA-256 (RFC 4509).' }),
  digest: Type.String({
    pattern: '^[0-9A-F]{64}$',
    maxLength: 64,
    examples: ['D4B7D520E7BB5F0F67674A0CCEB1E3E0614B93C4F9E99B8383F6A1E4469DA50A'],
  }),
  record: Type.String({ maxLength: 400, description: 'The DS record to give the registrar, in presentation format.' }),
});

const DnssecStatus = StringEnum(['disabled', 'signing', 'pending_ds', 'active', 'pending_disable', 'error'] as const, {
  description:
    '`disabled` → `signing` (the zone is being signed) → `pending_ds` (signed; the DS records wait to be published at the parent, seen by `check` or Berth’s hourly look) → `active`. Disabling goes through `pending_disable` (the CDS/CDNSKEY delete records of RFC 8078 ask the parent to remove the DS; the zone stays signed until `check` or the hourly look has seen the DS gone, or only another key’s DS left, for its TTL, which resolvers may cache it for) to `disabled`. `error`: the zone could not be signed (`error` says why); it is served as it was.',
});

export const DomainDnssec = Type.Object(
  {
    status: DnssecStatus,
    algorithm: Nullable(Algorithm),
    denial: Nullable(Denial),
    publish_cds: Type.Boolean({
      description: 'Whether the zone publishes CDS/CDNSKEY for its keys (RFC 7344), for parents that read them.',
    }),
    keys: Type.Array(DnssecKey, { maxItems: 10 }),
    ds_records: Type.Array(DsRecord, {
      maxItems: 10,
      description: 'Computed by Berth from the keys; checked against what the DNS server serves.',
    }),
    parent_ds_seen_at: Nullable(Timestamp),
    error: Nullable(Failure),
    /** The change being applied, if any. */
    operation: Nullable(Type.Ref('Operation')),
  },
  { $id: 'DomainDnssec', description: "A domain's DNSSEC: its state, keys and the DS records for its registrar." },
);
export type DomainDnssec = Static<typeof DomainDnssec>;

export const PutDnssec = Type.Object(
  {
    enabled: Type.Boolean(),
    algorithm: Type.Optional(Algorithm),
    denial: Type.Optional(Denial),
    publish_cds: Type.Optional(Type.Boolean()),
    force: Type.Optional(
      Type.Boolean({
        description:
          'Disable although the parent still publishes a DS: the zone publishes the delete records and stays signed until the DS is gone.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PutDnssec = Static<typeof PutDnssec>;

export const dnssecSchemas = [DomainDnssec];
