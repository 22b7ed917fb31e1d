import dns from 'node:dns';
import { type Caller, requireWritable } from '../../../auth/caller.js';
import type { Queryable } from '../../../db/client.js';
import { JOBS } from '../../../jobs/names.js';
import { dsContent, dsOf } from '../../../lib/dnssec/ds.js';
import { type DnssecAlgorithm, iscPrivateKey, newSigningKey } from '../../../lib/dnssec/keys.js';
import { conflict } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { seal, unseal } from '../../../lib/sealed.js';
import type { ZoneSigning } from '../../../provisioning/render/zone-file.js';
import * as accounts from '../../accounts/index.js';
import type { ServiceDeps } from '../../deps.js';
import * as ops from '../../operations/index.js';
import { publishEvent } from '../../publishing/index.js';
import { zoneRecords } from '../records/repo.js';
import * as domains from '../repo.js';
import type { DomainsService } from '../service.js';
import { zoneCommitter } from '../zone/change.js';
import { type ParentDs, parentDs } from './parent.js';
import * as repo from './repo.js';
import type { DomainDnssec, PutDnssec } from './schemas.js';

const OPERATION = 'domain.dnssec.update';
/** Signatures last 30 days (provisioning/render/zone-signing.ts); a zone is signed anew once 23 have passed. */
const RESIGN_AFTER_MS = 23 * 86_400_000;
/** How long a resolver may hold a DS whose TTL was never read: a day, the DS TTL of .com and most TLDs. */
const DS_TTL_UNKNOWN_S = 86_400;
/** The longest resolvers hold a record, whatever its TTL (RFC 8767 suggests 7 days; BIND's default is a week). */
const DS_TTL_MAX_S = 7 * 86_400;
/** How many parents the hourly look asks at once (each answers or times out within 6 s). */
const PARENT_CHECKS_AT_ONCE = 8;
/** How long the hourly look at the parents may take (real time: the job's own run is capped at 15 min). */
const PARENT_CHECKS_MAX_MS = 5 * 60_000;

/**
 * When the parent was first seen without the zone's DS (`now`, if this is the first time), and
 * whether a resolver may still hold it then: for the longest TTL it was seen with after that. A
 * DS never seen is held by none.
 */
function dsGone(row: repo.DnssecRow, now: Date): { goneAt: string; cached: boolean } {
  const goneAt = row.parent_ds_gone_at ? new Date(row.parent_ds_gone_at) : now;
  const cachedUntil = goneAt.getTime() + (row.parent_ds_ttl ?? DS_TTL_UNKNOWN_S) * 1000;
  return { goneAt: goneAt.toISOString(), cached: row.parent_ds_seen_at !== null && now.getTime() < cachedUntil };
}

/** What seeing the zone's own DS at the parent records. */
const dsSeen = (row: repo.DnssecRow, published: ParentDs[], now: Date) => ({
  parent_ds_seen_at: now.toISOString(),
  parent_ds_ttl: Math.min(DS_TTL_MAX_S, Math.max(row.parent_ds_ttl ?? 0, ...published.map((d) => d.ttl))),
  parent_ds_gone_at: null,
});

/** What a backup keeps of a signed zone. */
export interface SavedDnssec {
  algorithm: number;
  denial: 'nsec' | 'nsec3';
  publish_cds: boolean;
  keys: Pick<repo.DnssecKeyRow, 'algorithm' | 'flags' | 'public_key' | 'private_key_sealed'>[];
}

/** What an hourly look at the parents did: zones waiting, zones asked about (the rest wait for the next hour), looks that failed (a parent that did not answer, mostly). */
export interface ParentLook {
  waiting: number;
  asked: number;
  unanswered: number;
}

export function dnssecService(deps: ServiceDeps, domainsSvc: DomainsService) {
  const { db, config } = deps;
  const sealKey = repo.dnssecSealKey(config);
  const commit = zoneCommitter(deps);

  async function present(domain: domains.DomainRow, q: Queryable = db): Promise<DomainDnssec> {
    const row = await repo.findDnssec(q, domain.id);
    const open = await ops.openOperation(q, domain.id, OPERATION);
    const operation = open ? ops.toOperation(open) : null;
    if (!row)
      return {
        status: 'disabled',
        algorithm: null,
        denial: null,
        publish_cds: true,
        keys: [],
        ds_records: [],
        parent_ds_seen_at: null,
        error: null,
        operation,
      };
    const keys = await repo.keysOf(q, domain.id);
    return {
      status: row.status,
      algorithm: row.algorithm as DnssecAlgorithm,
      denial: row.denial,
      publish_cds: row.publish_cds,
      keys: keys.map((k) => ({
        id: k.id,
        role: 'csk' as const,
        flags: k.flags,
        key_tag: dsOf(domain.name, dnskeyOf(k)).key_tag,
        algorithm: k.algorithm as DnssecAlgorithm,
        dnskey: `${domain.name}. IN DNSKEY ${k.flags} 3 ${k.algorithm} ${k.public_key}`,
        active: true,
        published: true,
        created_at: new Date(k.created_at).toISOString(),
      })),
      ds_records: keys.map((k) => {
        const ds = dsOf(domain.name, dnskeyOf(k));
        return { ...ds, algorithm: ds.algorithm as DnssecAlgorithm, record: `${domain.name}. IN DS ${dsContent(ds)}` };
      }),
      parent_ds_seen_at: row.parent_ds_seen_at && new Date(row.parent_ds_seen_at).toISOString(),
      error: row.error,
      operation,
    };
  }

  const dnskeyOf = (k: repo.DnssecKeyRow) => ({ flags: k.flags, algorithm: k.algorithm, publicKey: k.public_key });
  /** What an apply served of the signing (the keys by their public half). */
  const fingerprint = (z: ZoneSigning | undefined) =>
    z ? JSON.stringify([z.denial, z.cds, z.keys.map((k) => k.publicKey)]) : 'unsigned';

  /** The DS records the parent publishes for the zone now, and whether one of them is for its keys. */
  async function atParent(domain: domains.DomainRow): Promise<{ published: ParentDs[]; ours: boolean }> {
    const { host, port } = config.dnssecResolver ?? { host: dns.getServers()[0] ?? '127.0.0.1', port: 53 };
    const published = await parentDs(domain.name, host, port);
    const mine = (await repo.keysOf(db, domain.id)).map((k) => dsContent(dsOf(domain.name, dnskeyOf(k))));
    return { published, ours: published.some((d) => mine.includes(dsContent({ ...d, digest_type: 2 }))) };
  }

  /** Writes the change and its zone apply (one serial bump) with its operation and event, in one transaction. */
  async function change(
    domain: domains.DomainRow,
    write: (tx: Queryable) => Promise<void>,
    event: string,
  ): Promise<DomainDnssec> {
    return db.transaction(async (tx) => {
      const locked = (await domains.findDomainById(tx, domain.id, true)) as domains.DomainRow;
      await write(tx);
      const row = await commit(tx, locked, { diff: { created: 0, updated: 0, deleted: 0 } });
      await ops.startOperation(tx, {
        type: OPERATION,
        resourceType: 'domain',
        resourceId: domain.id,
        accountId: domain.account_id,
        resellerId: domain.reseller_id,
      });
      return dnssecEvent(tx, row, event);
    });
  }

  async function dnssecEvent(tx: Queryable, domain: domains.DomainRow, type: string): Promise<DomainDnssec> {
    const data = await present(domain, tx);
    await publishEvent(tx, {
      type,
      accountId: domain.account_id,
      resellerId: domain.reseller_id,
      resource: { type: 'domain', id: domain.id, version: domain.version },
      data: { domain: domain.name, dnssec: data },
    });
    return data;
  }

  async function writable(caller: Caller, ref: string): Promise<domains.DomainRow> {
    const domain = await domainsSvc.load(caller, ref);
    requireWritable(caller, await accounts.findAccountById(db, domain.account_id));
    return domain;
  }

  /** Unsigned from now on: keys and settings gone, the zone applied without them. */
  const unsign = (domain: domains.DomainRow) =>
    change(domain, (tx) => repo.deleteDnssec(tx, domain.id), 'domain.dnssec.disabled');

  /**
   * A zone being unsigned whose DS the parent no longer publishes: unsigned once no resolver may
   * hold the DS (a validating one would find the zone's answers bogus until then); before, the
   * time it was first seen gone is kept and the zone stays signed.
   */
  async function unsignOnceUncached(domain: domains.DomainRow, row: repo.DnssecRow): Promise<DomainDnssec> {
    const { goneAt, cached } = dsGone(row, deps.clock.now());
    if (!cached) return unsign(domain);
    if (!row.parent_ds_gone_at) await repo.updateDnssec(db, domain.id, { parent_ds_gone_at: goneAt });
    return present(domain);
  }

  /** `check` for `domain`: what the parent publishes now moves a zone waiting on it. */
  async function checkParent(domain: domains.DomainRow): Promise<DomainDnssec> {
    const current = await repo.findDnssec(db, domain.id);
    if (!current) return present(domain);
    const { published, ours } = await atParent(domain);
    // Gone, or only another key's DS left: our DS may still be in caches (see unsignOnceUncached).
    if (current.status === 'pending_disable' && !ours) return unsignOnceUncached(domain, current);
    if (!ours) return present(domain);
    return db.transaction(async (tx) => {
      const seen = dsSeen(current, published, deps.clock.now());
      if (current.status !== 'pending_ds') {
        await repo.updateDnssec(tx, domain.id, seen);
        return present(domain, tx);
      }
      await repo.updateDnssec(tx, domain.id, { ...seen, status: 'active' });
      return dnssecEvent(tx, domain, 'domain.dnssec.active');
    });
  }

  return {
    async get(caller: Caller, ref: string): Promise<DomainDnssec> {
      return present(await domainsSvc.load(caller, ref));
    },

    async update(caller: Caller, ref: string, body: PutDnssec): Promise<DomainDnssec & { operation: { id: string } }> {
      const domain = await writable(caller, ref);
      const current = await repo.findDnssec(db, domain.id);
      let result: DomainDnssec;
      if (body.enabled) {
        const algorithm = body.algorithm ?? (current?.algorithm as DnssecAlgorithm | undefined) ?? 13;
        if (current && current.algorithm !== algorithm)
          throw conflict(
            'invalid_state',
            `The zone is signed with algorithm ${current.algorithm}; disable DNSSEC (and wait until it is disabled) before choosing another.`,
          );
        if (!current) await requireAuthoritative(domain);
        const key = current ? null : await newSigningKey(algorithm);
        result = await change(
          domain,
          async (tx) => {
            const settings = {
              denial: body.denial ?? current?.denial ?? 'nsec3',
              publish_cds: body.publish_cds ?? current?.publish_cds ?? true,
            };
            if (!key)
              return repo.updateDnssec(
                tx,
                domain.id,
                current?.status === 'pending_disable' ? { ...settings, status: 'pending_ds', parent_ds_gone_at: null } : settings,
              );
            const inserted = await repo.insertDnssec(
              tx,
              { domain_id: domain.id, algorithm, ...settings },
              {
                id: newId('dnk'),
                domain_id: domain.id,
                algorithm,
                flags: key.flags,
                public_key: key.publicKey,
                private_key_sealed: seal(key.privatePem, sealKey),
              },
            );
            if (!inserted) throw conflict('invalid_state', 'DNSSEC was enabled on this zone meanwhile; read it again.');
          },
          'domain.dnssec.updated',
        );
      } else {
        if (!current) return { ...(await present(domain)), operation: await noOperation(domain) };
        const { published, ours } = await atParent(domain);
        if (published.length > 0 && !body.force)
          throw conflict(
            'ds_still_published',
            `The parent zone still publishes a DS for ${domain.name}: remove it at the registrar first, or pass force: true to publish the CDS/CDNSKEY delete records and unsign once the DS is gone.`,
          );
        const now = deps.clock.now();
        const gone = dsGone(current, now);
        // The parent's DS asked away (RFC 8078), or gone (or only another key's left) but perhaps
        // still in resolvers' caches: signed until it has been seen gone for its TTL.
        const waits = ours ? dsSeen(current, published, now) : gone.cached && { parent_ds_gone_at: gone.goneAt };
        result = waits
          ? await change(
              domain,
              (tx) => repo.updateDnssec(tx, domain.id, { status: 'pending_disable', ...waits }),
              'domain.dnssec.updated',
            )
          : await unsign(domain);
      }
      return result as DomainDnssec & { operation: { id: string } };
    },

    /** Asks the parent for the zone's DS: `pending_ds` turns `active` once it is there, `pending_disable` unsigns once it is gone. */
    check: async (caller: Caller, ref: string): Promise<DomainDnssec> => checkParent(await writable(caller, ref)),

    /**
     * The hourly look at the parent for every zone waiting on it (`pending_ds`, `pending_disable`),
     * as `check` does, a few at a time, in a random order and for a few minutes at most (the
     * housekeeping job's other tasks come first; a resolver that does not answer costs 6 s a zone).
     * A zone not looked at, or whose parent did not answer, waits for the next hour.
     */
    async checkWaiting(): Promise<ParentLook> {
      const waiting = await repo.waitingForParent(db);
      const look: ParentLook = { waiting: waiting.length, asked: 0, unanswered: 0 };
      const until = Date.now() + PARENT_CHECKS_MAX_MS;
      const next = async (): Promise<void> => {
        for (let id = waiting.shift(); id && Date.now() < until; id = waiting.shift()) {
          const domain = await domains.findDomainById(db, id);
          if (!domain) continue;
          look.asked++;
          await checkParent(domain).catch(() => look.unanswered++);
        }
      };
      await Promise.all(Array.from({ length: PARENT_CHECKS_AT_ONCE }, next));
      return look;
    },

    signing: async (domainId: string) => (await signingNow(domainId)).signing,

    /** Signed zones whose signatures (30 days) have less than 7 days left signed anew (the daily check, hourly). */
    async resignDue(now: Date): Promise<void> {
      for (const id of await repo.signedBefore(db, new Date(now.getTime() - RESIGN_AFTER_MS)))
        await db.transaction(async (tx) => {
          const zone = await domains.reapplyZone(tx, id);
          if (zone) await deps.jobs.send(tx, JOBS.dnsApply, { domain_id: zone.id, name: zone.name });
        });
    },

    /** A signed zone's settings and keys as a backup keeps them: the private keys sealed, as at rest. */
    async saved(domainId: string): Promise<SavedDnssec | undefined> {
      const row = await repo.findDnssec(db, domainId);
      if (!row) return undefined;
      const keys = (await repo.keysOf(db, domainId)).map(({ algorithm, flags, public_key, private_key_sealed }) => ({
        algorithm,
        flags,
        public_key,
        private_key_sealed,
      }));
      return { algorithm: row.algorithm, denial: row.denial, publish_cds: row.publish_cds, keys };
    },

    /**
     * A restored zone signed again with the keys its backup kept (the DS at the parent is theirs),
     * unless it is signed now; it waits in `pending_ds` for a `check` once signed.
     */
    async restoreSaved(domainId: string, saved: SavedDnssec): Promise<void> {
      const domain = await domains.findDomainById(db, domainId);
      const [first] = saved.keys;
      if (!domain || !first || (await repo.findDnssec(db, domainId))) return;
      const row = { domain_id: domainId, algorithm: saved.algorithm, denial: saved.denial, publish_cds: saved.publish_cds };
      await change(
        domain,
        async (tx) => void (await repo.insertDnssec(tx, row, { ...first, id: newId('dnk'), domain_id: domainId })),
        'domain.dnssec.updated',
      );
    },

    /**
     * After the zone's apply, signed with `used`: if that is how the zone should be signed now (an
     * older change's apply is not; the newer one's follows), a zone being signed is signed, or
     * could not be, and the change's operation ends.
     */
    async applied(domain: { id: string; name: string }, used: ZoneSigning | undefined, failure: string | null): Promise<void> {
      const { row, signing } = await signingNow(domain.id);
      if (fingerprint(signing) !== fingerprint(used)) return;
      if (row && !failure) await repo.updateDnssec(db, domain.id, { signed_at: deps.clock.now().toISOString() });
      const op = await ops.openOperation(db, domain.id, OPERATION);
      if (!op && (!row || (failure ? row.status === 'error' : !['signing', 'error'].includes(row.status)))) return;
      await db.transaction(async (tx) => {
        if (row && failure && row.status !== 'error') {
          await repo.updateDnssec(tx, domain.id, { status: 'error', error: { code: 'signing_failed', detail: failure } });
          const current = await domains.findDomainById(tx, domain.id);
          if (current) await dnssecEvent(tx, current, 'domain.dnssec.error');
        } else if (row && !failure && (row.status === 'signing' || row.status === 'error'))
          await repo.updateDnssec(tx, domain.id, { status: 'pending_ds', error: null });
        if (op)
          await ops.transition(tx, op.id, ['queued', 'running'], {
            status: failure ? 'failed' : 'succeeded',
            progress: 100,
            error: failure ? { code: 'signing_failed', detail: failure } : undefined,
          });
      });
    },
  };

  /** How the zone is signed now, for its apply (the keys unsealed for the signer alone). */
  async function signingNow(domainId: string): Promise<{ row?: repo.DnssecRow; signing?: ZoneSigning }> {
    const row = await repo.findDnssec(db, domainId);
    if (!row) return {};
    const keys = (await repo.keysOf(db, domainId)).map((k) => ({
      ...dnskeyOf(k),
      privateKey: iscPrivateKey({ algorithm: k.algorithm, privatePem: unseal(k.private_key_sealed, sealKey) }),
    }));
    const cds = row.status === 'pending_disable' ? 'delete' : row.publish_cds ? 'publish' : 'none';
    return { row, signing: { keys, denial: row.denial, cds } };
  }

  /** 409 `not_authoritative` unless the zone's NS records name this provider's name servers. */
  async function requireAuthoritative(domain: domains.DomainRow): Promise<void> {
    const ours = new Set(config.nameservers.map((n) => n.toLowerCase().replace(/\.$/, '')));
    const ns = (await zoneRecords(db, domain.id)).filter((r) => r.name === '@' && r.type === 'NS');
    if (!ns.some((r) => ours.has(r.content.toLowerCase().replace(/\.$/, ''))))
      throw conflict(
        'not_authoritative',
        `The zone's NS records do not name this provider's name servers (${config.nameservers.join(', ')}): Berth does not answer for ${domain.name}, so it cannot sign it.`,
      );
  }

  /** A PUT that changes nothing still answers 202 with an operation, finished at once. */
  async function noOperation(domain: domains.DomainRow) {
    const { row } = await ops.startOperation(db, {
      type: OPERATION,
      resourceType: 'domain',
      resourceId: domain.id,
      accountId: domain.account_id,
      resellerId: domain.reseller_id,
    });
    return ops.toOperation(
      (await ops.transition(db, row.id, ['queued', 'running'], { status: 'succeeded', progress: 100 })) ?? row,
    );
  }
}

export type DnssecService = ReturnType<typeof dnssecService>;
