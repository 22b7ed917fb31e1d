import { Type, type Static } from 'typebox';
import { Id, PageQuery, ResourceMeta } from '../../../http/schemas.js';
import { DomainParam, RecordType } from '../schemas.js';

/** DNS records as the API shows and takes them: each shape declared once (validator, type, document). */

/** A record's TTL as stored: what the API writes (at least 60), or what a move lowered it to. */
const StoredTtl = Type.Integer({
  minimum: 5,
  maximum: 86400,
  format: 'int32',
  description:
    'Seconds. A record written through the API has at least 60; a move of its account to another server lowers the records naming the server it leaves to `BERTH_MOVE_TTL_S` (at least 5) while it runs, and a sync may send such a record back with that TTL.',
});
export const DnsRecord = Type.Object(
  {
    id: Id('rec'),
    domain_id: Id('dom'),
    name: Type.String({
      maxLength: 253,
      description: 'Relative to the zone; `@` is the apex. Unicode labels are stored as A-labels (`xn--`).',
    }),
    unicode_name: Type.String({
      maxLength: 253,
      description: '`name` with its A-labels decoded (`bücher` for `xn--bcher-kva`).',
    }),
    fqdn: Type.String({ maxLength: 255 }),
    type: RecordType,
    ttl: StoredTtl,
    content: Type.String({
      maxLength: 65535,
      description: 'RDATA in zone-file presentation format; TXT unquoted. Host names in it are stored as A-labels.',
    }),
    unicode_content: Type.String({
      maxLength: 65535,
      description:
        '`content` with the A-labels of its host names decoded (CNAME, NS, MX, SRV targets); the same as `content` otherwise.',
    }),
    managed: Type.Boolean({ description: 'SOA and apex NS: maintained by the API, read-only.' }),
    ...ResourceMeta,
  },
  { $id: 'DnsRecord' },
);

export const RecordName = Type.String({
  minLength: 1,
  maxLength: 253,
  description: 'Relative to the zone (`@` for the apex) or absolute with a trailing dot.',
  examples: ['www'],
});
export const Ttl = Type.Integer({
  minimum: 60,
  maximum: 86400,
  format: 'int32',
  description: 'Seconds; shared by every record of a set.',
});
export const Content = Type.String({
  minLength: 1,
  maxLength: 65535,
  description: 'RDATA in presentation format (`10 mail.example.com.`); TXT as plain text (quoted strings are joined).',
  examples: ['192.0.2.10'],
});
export const RecordMutable = { name: RecordName, type: RecordType, ttl: Ttl, content: Content };
export const CreateRecord = Type.Object(
  { name: RecordName, type: RecordType, ttl: Type.Optional(Ttl), content: Content },
  { additionalProperties: false },
);
export const RecordParams = Type.Object({ domain: DomainParam, record_id: Id('rec') }, { additionalProperties: false });

const SyncRecord = Type.Object({ name: RecordName, type: Type.String({ maxLength: 10 }), ttl: StoredTtl, content: Content });
// A zone file of 5 MiB holds a few hundred thousand records; a sync body at most 100,000.
const SyncRecords = Type.Array(SyncRecord, { maxItems: 1_000_000 });
export const SyncResponse = Type.Object({
  created: SyncRecords,
  updated: SyncRecords,
  deleted: SyncRecords,
  unchanged: Type.Integer({ minimum: 0, maximum: 1_000_000, format: 'int32' }),
  serial: Type.Integer({ minimum: 1, maximum: 4294967295, format: 'int64' }),
  zone_version: Type.Integer({ minimum: 1, maximum: 2147483647, format: 'int32', description: 'The new zone ETag value.' }),
  dry_run: Type.Boolean(),
});

export type DnsRecord = Static<typeof DnsRecord>;
export type CreateRecord = Static<typeof CreateRecord>;
export type RecordPatch = Partial<Static<ReturnType<typeof Type.Object<typeof RecordMutable>>>>;

/** `PUT /v1/domains/{domain}/records`: the complete set of the zone's unmanaged records. */
export const SyncBody = Type.Object(
  {
    records: Type.Array(
      Type.Object({ ...CreateRecord.properties, ttl: Type.Optional(StoredTtl) }, { additionalProperties: false }),
      { maxItems: 100_000 },
    ),
  },
  { additionalProperties: false },
);
export type SyncResult = Static<typeof SyncResponse>;

export const RecordListQuery = Type.Object(
  { ...PageQuery, name: Type.Optional(Type.String({ maxLength: 253 })), type: Type.Optional(RecordType) },
  { additionalProperties: false },
);
export type RecordListQuery = Static<typeof RecordListQuery>;

export const DryRunQuery = Type.Object(
  { dry_run: Type.Optional(Type.Boolean({ default: false })) },
  { additionalProperties: false },
);

export const recordSchemas = [DnsRecord];
