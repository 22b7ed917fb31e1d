import { unicodeName } from '../../lib/domain-name.js';
import type { RecordType } from '../../lib/record-types.js';
import type { RecordRow } from './records/repo.js';
import type { DnsRecord } from './records/schemas.js';
import type * as repo from './repo.js';
import type { Domain } from './schemas.js';

/** The API representations of domains and records. */
export const toDomain = (r: repo.CountedDomainRow, nameservers: readonly string[]): Domain => ({
  id: r.id,
  name: r.name,
  unicode_name: r.unicode_name,
  account_id: r.account_id,
  status: r.status,
  nameservers: [...nameservers],
  dns: { serial: r.serial, record_count: r.record_count },
  mail_enabled: r.mail_enabled,
  dmarc: { policy: r.dmarc_policy, rua: r.dmarc_rua },
  catch_all: r.catch_all,
  sync_state: r.sync_state,
  sync_error: r.sync_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

/** Record types whose content names hosts: their `unicode_content` decodes A-labels. */
const NAMES_HOSTS = new Set(['CNAME', 'NS', 'MX', 'SRV', 'PTR', 'ALIAS', 'HTTPS', 'SVCB']);

export const toRecord = (r: RecordRow, domain: string): DnsRecord => ({
  id: r.id,
  domain_id: r.domain_id,
  name: r.name,
  unicode_name: unicodeName(r.name),
  fqdn: r.name === '@' ? `${domain}.` : `${r.name}.${domain}.`,
  // One of RECORD_TYPES: the table's check constraint (migration 0016) holds it to them.
  type: r.type as RecordType,
  ttl: r.ttl,
  content: r.content,
  unicode_content: NAMES_HOSTS.has(r.type) ? r.content.split(' ').map(unicodeName).join(' ') : r.content,
  managed: r.managed,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});
