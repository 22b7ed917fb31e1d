import type { Readable } from 'node:stream';
import { type Static, type TSchema, Type } from 'typebox';
import type { Db, Queryable } from '../db/client.js';
import { ACCOUNT_USERNAME_PATTERN } from '../lib/account-username.js';
import { type CronRunRecord, CronUnitSpec } from './render/cron.js';
import { MailDomainContent } from './render/mail.js';
import { DatabaseAccountSpec, DatabaseSpec, PartialLoad, TableNames } from './render/mariadb.js';
import { SiteTls } from './render/nginx.js';
import { PhpSettings } from './render/php-fpm.js';
import { type SshLogin, SshUnitSpec } from './render/ssh.js';

const Key = Type.String({ minLength: 1, maxLength: 100 });
const Generation = Type.Integer({ minimum: 1, maximum: 2147483647 });
const Username = Type.String({ pattern: ACCOUNT_USERNAME_PATTERN });
const PhpVersion = Type.String({ pattern: '^[0-9]\\.[0-9]{1,2}$' });

/**
 * A site as its web server's agent is handed it. Paths are not in it: the agent places the
 * site's files under its own data directory, as the control plane does for the local server.
 */
export const AgentSiteSpec = Type.Object({
  site_id: Key,
  account_id: Key,
  username: Username,
  /** The hostname first, then the aliases. */
  hostnames: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { minItems: 1, maxItems: 21 }),
  suspended: Type.Boolean(),
  /** Its account is frozen for a move: 503 with `Retry-After`. */
  frozen: Type.Boolean(),
  /** The PHP version the site runs and its settings (null: static files only). */
  php: Type.Union([Type.Object({ version: PhpVersion, settings: PhpSettings }), Type.Null()]),
  tls: Type.Union([SiteTls, Type.Null()]),
  /** The PHP versions the account's sites on this server use: their pools exist before the block is written. */
  php_versions: Type.Array(PhpVersion),
  /** `pm.max_children` of the account's pools (the plan's `php_workers`). */
  php_workers: Type.Integer({ minimum: 1, maximum: 10_000 }),
  /** Pools of versions not in `php_versions` go after the apply (false while another site of the account waits for one). */
  prune: Type.Boolean(),
  /** The site is being deleted: it stops being served and its files go. */
  removed: Type.Boolean(),
  /**
   * The live deployment: the agent fetches its files once (the unit's `release` artifact), then
   * points the site's `current` at them. Null: nothing deployed yet.
   */
  release: Type.Union([Key, Type.Null()]),
});
export type AgentSiteSpec = Static<typeof AgentSiteSpec>;

/**
 * A mail domain as its mail server's agent is handed it: its whole content (mailboxes with their
 * password hashes, forwarders, the DKIM key it signs with), which the agent places under its own
 * data directory. `enabled` false: the domain has no mail there; `removed`: the domain is gone.
 */
export const AgentMailSpec = Type.Object({
  account_id: Key,
  enabled: Type.Boolean(),
  removed: Type.Boolean(),
  domain: MailDomainContent,
});
export type AgentMailSpec = Static<typeof AgentMailSpec>;

/** A terminated account's share of the server, to take away: its databases, sites, pools, mail and Unix user. */
export const AgentWithdrawal = Type.Object({
  account_id: Key,
  username: Username,
  roles: Type.Array(Type.Union([Type.Literal('web'), Type.Literal('database'), Type.Literal('mail')])),
});
export type AgentWithdrawal = Static<typeof AgentWithdrawal>;

const Address = Type.Union([Type.String({ minLength: 2, maxLength: 45 }), Type.Null()]);

/**
 * A moved account's share of this server, forwarded while the records naming it may be cached:
 * its sites (the web units the agent keeps) proxied to the web server at `web`, its mail domains
 * relayed to the mail server at `mail` (null: the role did not move from here). The account's
 * withdrawal ends it.
 */
export const AgentForward = Type.Object({ account_id: Key, web: Address, mail: Address });
export type AgentForward = Static<typeof AgentForward>;

/** A domain name as its A-label, the name of its mail directory. */
const DomainName = Type.String({ pattern: '^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$' });

/** An ACME HTTP-01 token: base64url, the only thing that becomes a file name. */
const AcmeToken = Type.String({ pattern: '^[A-Za-z0-9_-]{16,256}$' });

/** The most names a pack of changes names; a copy with more changes is packed whole again. */
export const PACK_ONLY_MAX = 10_000;

const PackNames = Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { maxItems: PACK_ONLY_MAX });

/**
 * How a pack is taken for a copy kept up to date (a move's): `list` sends the listing of what
 * it would pack (archives/listing.ts) instead of an archive, `hash` the SHA-256 of these names'
 * files; `only` packs just these names.
 */
const PackFor = {
  list: Type.Optional(Type.Boolean()),
  hash: Type.Optional(PackNames),
  only: Type.Optional(PackNames),
};

/**
 * A move's copy received ahead of its cutover (`input`): whole, replacing what an earlier attempt
 * staged, or laid over the staged copy less `gone`; `only` names what the control plane packs.
 * `expect` is what the staged copy holds once received (its files and their bytes), checked there;
 * a whole copy relayed as it leaves the old server has none (the control plane learns it as the
 * agent does), and the send that follows it checks it.
 */
const Received = {
  whole: Type.Boolean(),
  only: Type.Optional(PackNames),
  gone: Type.Optional(PackNames),
  expect: Type.Optional(Type.Object({ files: Type.Integer({ minimum: 0 }), bytes: Type.Number({ minimum: 0 }) })),
};

/**
 * Work done once on the server: a database dumped into the task's `output` artifact (or its
 * tables' checksums sent there, JSON), or loaded from its `input` artifact (in part, `partial`:
 * a move's final copy of what changed), or an account's databases sent ahead by a move dropped
 * (`database.discard`: the move rolled back); a site's live release
 * or an account's maildirs packed into `output` (or listed, or only some of their files packed: `PackFor`), maildirs put back from `input`;
 * a move's copy of a site or of the maildirs staged here ahead of its cutover from `input` (or
 * discarded), the maildirs then put in place from it; ACME HTTP-01 proofs placed where its web server
 * serves them, or taken away, for a certificate of a site it serves; a cron job's run started now.
 */
export const AgentTask = Type.Union([
  Type.Object({
    action: Type.Literal('database.dump'),
    database: Type.String({ minLength: 1, maxLength: 80 }),
    except: Type.Optional(TableNames),
  }),
  Type.Object({
    action: Type.Literal('database.load'),
    database: DatabaseSpec,
    partial: Type.Optional(PartialLoad),
  }),
  Type.Object({ action: Type.Literal('database.discard'), username: Username }),
  Type.Object({ action: Type.Literal('database.checksum'), database: Type.String({ minLength: 1, maxLength: 80 }) }),
  Type.Object({ action: Type.Literal('site.pack'), account_id: Key, site_id: Key, release: Key, ...PackFor }),
  Type.Object({ action: Type.Literal('site.receive'), account_id: Key, site_id: Key, release: Key, ...Received }),
  Type.Object({ action: Type.Literal('site.discard'), account_id: Key, site_id: Key }),
  Type.Object({ action: Type.Literal('mail.receive'), account_id: Key, ...Received }),
  Type.Object({ action: Type.Literal('mail.discard'), account_id: Key }),
  Type.Object({
    action: Type.Literal('mail.pack'),
    account_id: Key,
    domains: Type.Array(DomainName, { maxItems: 10_000 }),
    ...PackFor,
  }),
  Type.Object({
    action: Type.Literal('mail.unpack'),
    account_id: Key,
    mailboxes: Type.Array(Type.Object({ domain: DomainName, id: Key }), { maxItems: 100_000 }),
    /** The messages are the copy a move sent ahead (`mail.receive`), not an input. */
    staged: Type.Optional(Type.Boolean()),
  }),
  Type.Object({
    action: Type.Literal('acme.present'),
    proofs: Type.Array(Type.Object({ token: AcmeToken, key_authorization: Type.String({ maxLength: 1000 }) }), { maxItems: 100 }),
  }),
  Type.Object({ action: Type.Literal('acme.clean_up'), tokens: Type.Array(AcmeToken, { maxItems: 100 }) }),
  Type.Object({ action: Type.Literal('cron.run'), job_id: Key, run_id: Key }),
]);
export type AgentTask = Static<typeof AgentTask>;

const unit = <K extends string, S extends TSchema>(kind: K, spec: S) =>
  Type.Object({ kind: Type.Literal(kind), key: Key, generation: Generation, spec });

/**
 * What an agent is handed for one apply unit: a complete spec that carries only its own
 * secrets, and the generation it describes. The agent checks it against this schema, applies it
 * with its local driver and reports that generation (or why it failed).
 */
export const AgentUnit = Type.Union([
  unit('database', DatabaseAccountSpec),
  unit('web', AgentSiteSpec),
  unit('mail', AgentMailSpec),
  unit('withdrawal', AgentWithdrawal),
  unit('forward', AgentForward),
  unit('task', AgentTask),
  unit('cron', CronUnitSpec),
  unit('ssh', SshUnitSpec),
]);
export type AgentUnit = Static<typeof AgentUnit>;

const AgentUnitKind = Type.Union([
  Type.Literal('database'),
  Type.Literal('web'),
  Type.Literal('mail'),
  Type.Literal('withdrawal'),
  Type.Literal('forward'),
  Type.Literal('task'),
  Type.Literal('cron'),
  Type.Literal('ssh'),
]);
export type AgentUnitKind = AgentUnit['kind'];

/** What names a unit and the generation it describes, in what is handed out and in what is reported. */
export const AgentUnitHead = Type.Object({ kind: AgentUnitKind, key: Key, generation: Generation });

/** What an agent says about one unit it was given: the listener validates it, the agent sends it. */
export const AgentReport = Type.Object(
  {
    ...AgentUnitHead.properties,
    /** Why the apply failed; absent when it succeeded. */
    error: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export type AgentReport = Static<typeof AgentReport>;

/**
 * What an agent measured on its server, every few minutes: a site's files (`web`, keyed by the
 * site), a mailbox's (`mail`, keyed by the mailbox) and a database's size (`database`, keyed by
 * its name). The control plane records only what belongs to accounts placed on that server.
 */
export const AgentMeasurement = Type.Object(
  {
    kind: Type.Union([Type.Literal('web'), Type.Literal('mail'), Type.Literal('database')]),
    key: Key,
    bytes: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    /** A site's bytes sent per UTC day, from the web server's access log (the days still counted). */
    traffic: Type.Optional(
      Type.Array(
        Type.Object(
          { day: Type.String({ format: 'date' }), bytes: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) },
          { additionalProperties: false },
        ),
        { maxItems: 31 },
      ),
    ),
  },
  { additionalProperties: false },
);
export type AgentMeasurement = Static<typeof AgentMeasurement>;

/**
 * A module's apply units as the agent listener serves them: the units of the accounts placed on
 * a server that it has yet to apply (pending or failed), and the recording of a report, which
 * refuses a unit the server does not own (`foreign`) or a generation it was never given (`future`).
 */
export interface AgentUnitSource {
  kind: AgentUnitKind;
  pending(db: Queryable, serverId: string): Promise<AgentUnit[]>;
  /**
   * SQL true whenever `pending` may find units for the server `$1` (an EXISTS over what it
   * reads; the owner's constant, never input): the listener asks every source's in one
   * statement and only those that answer true for their units, so that an idle server's poll
   * costs one statement, not one per source.
   */
  waiting: string;
  report(db: Queryable, serverId: string, report: AgentReport): Promise<'recorded' | 'foreign' | 'future'>;
  /**
   * Bytes a unit refers to (a site's release, as a tar.gz), streamed to the agent that applies
   * it; `foreign` for another server's unit, undefined for what the unit does not name.
   */
  artifact?(db: Queryable, serverId: string, key: string, name: string): Promise<Readable | 'foreign' | undefined>;
  /** Bytes the agent sends for a unit (a task's output), stored; `foreign` or undefined as above. */
  receive?(db: Queryable, serverId: string, key: string, name: string, body: Readable): Promise<'stored' | 'foreign' | undefined>;
  /** Records what the agent measured of this kind, for what the server holds (the rest changes nothing). */
  measured?(db: Queryable, serverId: string, measurements: AgentMeasurement[]): Promise<void>;
  /** Stores the runs of cron jobs the server's runner recorded, of jobs the server holds; the ids it may forget. */
  runs?(db: Db, serverId: string, runs: CronRunRecord[]): Promise<string[]>;
  /** Records the key logins the server's sshd accepted. */
  logins?(db: Db, serverId: string, logins: SshLogin[]): Promise<void>;
}
