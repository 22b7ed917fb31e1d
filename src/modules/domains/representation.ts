import { unicodeName } from '../../lib/domain-name.js';
import type * as repo from './repo.js';
import type { RecordRow } from './records/repo.js';

/** The API representations of domains and records. */
export const toDomain = (r: repo.CountedDomainRow, nameservers: readonly string[]) => ({
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
export type Domain = ReturnType<typeof toDomain>;

/** Record types whose content names hosts: their `unicode_content` decodes A-labels. */
const NAMES_HOSTS = new Set(['CNAME', 'NS', 'MX', 'SRV', 'PTR', 'ALIAS', 'HTTPS', 'SVCB']);

export const toRecord = (r: RecordRow, domain: string) => ({
  id: r.id,
  domain_id: r.domain_id,
  name: r.name,
  unicode_name: unicodeName(r.name),
  fqdn: r.name === '@' ? `${domain}.` : `${r.name}.${domain}.`,
  type: r.type,
  ttl: r.ttl,
  content: r.content,
  unicode_content: NAMES_HOSTS.has(r.type) ? r.content.split(' ').map(unicodeName).join(' ') : r.content,
  managed: r.managed,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});
export type DnsRecord = ReturnType<typeof toRecord>;
