import { dsContent, dsOf } from '../../lib/dnssec/ds.js';
import type { DnsDriver } from '../driver.js';
import { txtPresentation, type Zone } from '../render/zone-file.js';

export interface PowerDnsOptions {
  /** The Authoritative server's API, e.g. `http://127.0.0.1:8081`. */
  apiUrl: string;
  apiKey: string;
  /** The API's server id; `localhost` on a standalone server. */
  serverId: string;
  timeoutMs?: number;
}

interface RRset {
  name: string;
  type: string;
  ttl: number;
  records: { content: string; disabled: boolean }[];
}

interface ServedZone {
  soa_edit_api: string;
  /** Whether PowerDNS holds keys for it (signs it). */
  dnssec?: boolean;
  nsec3param?: string;
  api_rectify?: boolean;
  rrsets: RRset[];
}

/** A key as PowerDNS's cryptokeys API shows it: `dnskey` is `<flags> 3 <algorithm> <key>`, `ds` its DS records. */
interface CryptoKey {
  id: number;
  dnskey: string;
  ds?: string[];
}

/** NSEC3 as RFC 9276 has it: SHA-1, no opt-out, no extra iterations, no salt. */
const NSEC3PARAM = '1 0 0 -';
/** PUBLISH-CDS / PUBLISH-CDNSKEY metadata: the keys' (SHA-256 digests), RFC 8078's delete records, or none. */
const CDS_METADATA = {
  publish: { 'PUBLISH-CDS': ['2'], 'PUBLISH-CDNSKEY': ['1'] },
  delete: { 'PUBLISH-CDS': ['0'], 'PUBLISH-CDNSKEY': ['0'] },
  none: { 'PUBLISH-CDS': [], 'PUBLISH-CDNSKEY': [] },
};

/**
 * Serves zones with PowerDNS Authoritative through its HTTP API: a new zone is created whole; an
 * existing one gets one PATCH that replaces every RRset that differs and deletes every RRset no
 * longer wanted (PowerDNS applies a PATCH atomically). The SOA is Berth's, serial included:
 * `soa_edit_api` is emptied so PowerDNS never rewrites it.
 */
export class PowerDnsDriver implements DnsDriver {
  readonly name = 'powerdns';

  constructor(private readonly o: PowerDnsOptions) {}

  async applyZone(zone: Zone): Promise<void> {
    const wanted = toRRsets(zone);
    const served = await this.request<ServedZone>('GET', zonePath(zone.name), undefined, [404, 422]);
    if (!served) {
      const created = await this.request('POST', '/zones', newZone(zone.name, wanted), [409]);
      // A query before the zone existed left a cached refusal that creating does not purge.
      if (created) {
        await this.sign(zone, { soa_edit_api: '', rrsets: [] });
        return this.flushCache(zone.name);
      }
      // Created by a concurrent apply of the same zone: fall through to bringing it up to date.
      return this.applyZone(zone);
    }
    if (served.soa_edit_api !== '') await this.request('PUT', zonePath(zone.name), { soa_edit_api: '' });
    const changes = diffRRsets(served.rrsets, wanted);
    const signing = await this.sign(zone, served);
    if (changes.length || signing) {
      if (changes.length) await this.request('PATCH', zonePath(zone.name), { rrsets: changes });
      // Changes are rectified as they are applied (`api_rectify`); a zone just signed is rectified whole.
      if (zone.dnssec && signing) await this.request('PUT', `${zonePath(zone.name)}/rectify`);
      // PowerDNS purges its packet cache before its query cache after a PATCH (up to 4.9's and
      // 5.0's fixes of October 2025, PowerDNS #16286): a query answered between the two purges
      // puts the old answer back in the packet cache, served for `cache-ttl` (20 s by default).
      // That query's entry is gone once the PATCH has returned, so a second purge now clears it.
      await this.flushCache(zone.name);
    }
  }

  /**
   * Signs the zone with its keys (imported; any other key deleted), NSEC or NSEC3, `api_rectify`
   * so that every later PATCH leaves it rectified, and the CDS/CDNSKEY metadata; or unsigns it.
   * Once anything of it changed (the result), the DS records PowerDNS derives from the keys must
   * be those Berth computed.
   */
  private async sign(zone: Zone, served: ServedZone): Promise<boolean> {
    const path = zonePath(zone.name);
    const signing = zone.dnssec;
    if (!signing && !served.dnssec) return false; // unsigned, as it should be: no request more
    const keys = (await this.request<CryptoKey[]>('GET', `${path}/cryptokeys`)) as CryptoKey[];
    const rdataOf = (k: { flags: number; algorithm: number; publicKey: string }) => `${k.flags} 3 ${k.algorithm} ${k.publicKey}`;
    const wanted = new Map((signing?.keys ?? []).map((k) => [rdataOf(k), k]));
    let changed = false;
    for (const k of keys)
      if (!wanted.delete(k.dnskey)) {
        await this.request('DELETE', `${path}/cryptokeys/${k.id}`);
        changed = true;
      }
    for (const k of wanted.values()) {
      await this.request('POST', `${path}/cryptokeys`, {
        keytype: 'csk',
        active: true,
        published: true,
        privatekey: k.privateKey,
      });
      changed = true;
    }
    const nsec3param = signing?.denial === 'nsec3' ? NSEC3PARAM : '';
    if ((served.nsec3param ?? '') !== nsec3param || (served.api_rectify ?? false) !== Boolean(signing)) {
      await this.request('PUT', path, { nsec3param, api_rectify: Boolean(signing) });
      changed = true;
    }
    for (const [kind, values] of Object.entries(CDS_METADATA[signing?.cds ?? 'none'])) {
      const current = (await this.request<{ metadata: string[] }>('GET', `${path}/metadata/${kind}`))?.metadata ?? [];
      if (current.join() === values.join()) continue;
      if (values.length) await this.request('PUT', `${path}/metadata/${kind}`, { kind, metadata: values });
      else await this.request('DELETE', `${path}/metadata/${kind}`);
      changed = true;
    }
    // Checked when the keys or settings change: nothing else changes the DS.
    if (signing && changed) await this.checkDs(zone.name, signing.keys);
    return changed;
  }

  /** Each key's DS as PowerDNS serves it is the one Berth computed (what the caller hands its registrar). */
  private async checkDs(name: string, keys: { flags: number; algorithm: number; publicKey: string }[]): Promise<void> {
    const served = ((await this.request<CryptoKey[]>('GET', `${zonePath(name)}/cryptokeys`)) as CryptoKey[]).flatMap(
      (k) => k.ds ?? [],
    );
    for (const key of keys) {
      const ds = dsContent(dsOf(name, key));
      if (!served.some((d) => d.toUpperCase() === ds))
        throw new Error(`PowerDNS serves no DS ${ds} for the key of ${name} (it serves ${served.join(', ') || 'none'})`);
    }
  }

  /** Purges PowerDNS's packet and query caches of every name in the zone. */
  private async flushCache(name: string): Promise<void> {
    await this.request('PUT', `/cache/flush?domain=${encodeURIComponent(`${name}.`)}`);
  }

  async removeZone(name: string): Promise<void> {
    await this.request('DELETE', zonePath(name), undefined, [404, 422]);
  }

  /** Resolves to the parsed body (true when empty), or null for one of the `absent` statuses; throws on anything else. */
  private async request<T = true>(method: string, path: string, body?: unknown, absent: number[] = []): Promise<T | null> {
    let res: Response;
    try {
      res = await fetch(`${this.o.apiUrl.replace(/\/$/, '')}/api/v1/servers/${encodeURIComponent(this.o.serverId)}${path}`, {
        method,
        headers: { 'X-API-Key': this.o.apiKey, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
      throw new Error(`PowerDNS API unreachable (${cause})`);
    }
    const text = await res.text();
    if (absent.includes(res.status)) return null;
    if (!res.ok) throw new Error(`PowerDNS API answered ${res.status}: ${apiError(text)}`);
    return (text ? JSON.parse(text) : true) as T;
  }
}

const zonePath = (name: string) => `/zones/${encodeURIComponent(`${name}.`)}`;

const apiError = (text: string): string => {
  try {
    const { error } = JSON.parse(text) as { error?: unknown };
    return typeof error === 'string' ? error : text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
};

const newZone = (name: string, rrsets: RRset[]) => ({
  name: `${name}.`,
  kind: 'Native',
  // The NS RRset comes with the rrsets; PowerDNS refuses both at once.
  nameservers: [],
  soa_edit_api: '',
  rrsets,
});

/** The zone's records as PowerDNS RRsets: absolute owner names, TXT as quoted character-strings, one TTL per set (the lowest). */
function toRRsets(zone: Zone): RRset[] {
  const sets = new Map<string, RRset>();
  for (const r of zone.records) {
    const name = r.name === '@' ? `${zone.name}.` : `${r.name}.${zone.name}.`;
    const key = `${name} ${r.type}`;
    const set = sets.get(key) ?? { name, type: r.type, ttl: r.ttl, records: [] };
    set.ttl = Math.min(set.ttl, r.ttl);
    set.records.push({ content: r.type === 'TXT' ? txtPresentation(r.content) : r.content, disabled: false });
    sets.set(key, set);
  }
  return [...sets.values()];
}

const contents = (s: RRset) =>
  s.records
    .map((r) => r.content)
    .sort()
    .join('\n');
const sameRRset = (a: RRset, b: RRset) => a.ttl === b.ttl && contents(a) === contents(b);

/** The PATCH that makes `served` equal `wanted`: REPLACE what differs, DELETE what is no longer wanted. */
function diffRRsets(served: RRset[], wanted: RRset[]) {
  const key = (s: RRset) => `${s.name} ${s.type}`;
  const servedByKey = new Map(served.map((s) => [key(s), s]));
  const wantedKeys = new Set(wanted.map(key));
  return [
    ...wanted
      .filter((s) => {
        const current = servedByKey.get(key(s));
        return !current || !sameRRset(current, s);
      })
      .map((s) => ({ ...s, changetype: 'REPLACE' })),
    ...served.filter((s) => !wantedKeys.has(key(s))).map((s) => ({ name: s.name, type: s.type, changetype: 'DELETE' })),
  ];
}
