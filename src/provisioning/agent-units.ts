import type { Readable } from 'node:stream';
import { type Static, Type } from 'typebox';
import type { Queryable } from '../db/client.js';
import type { DatabaseAccountSpec, DatabaseSpec } from './render/mariadb.js';
import type { SiteTls } from './render/nginx.js';
import type { PhpSettings } from './render/php-fpm.js';

/**
 * A site as its web server's agent is handed it. Paths are not in it: the agent places the
 * site's files under its own data directory, as the control plane does for the local server.
 */
export interface AgentSiteSpec {
  site_id: string;
  account_id: string;
  /** The account's username: its Unix user and PHP pools are named after it. */
  username: string;
  /** The hostname first, then the aliases. */
  hostnames: string[];
  suspended: boolean;
  /** The PHP version the site runs and its settings (null: static files only). */
  php: { version: string; settings: PhpSettings } | null;
  tls: SiteTls | null;
  /** The PHP versions the account's sites on this server use: their pools exist before the block is written. */
  php_versions: string[];
  /** `pm.max_children` of the account's pools (the plan's `php_workers`). */
  php_workers: number;
  /** Pools of versions not in `php_versions` go after the apply (false while another site of the account waits for one). */
  prune: boolean;
  /** The site is being deleted: it stops being served and its files go. */
  removed: boolean;
  /**
   * The live deployment: the agent fetches its files once (the unit's `release` artifact), then
   * points the site's `current` at them. Null: nothing deployed yet.
   */
  release: string | null;
}

/** A terminated account's share of the server, to take away: its databases, sites, pools and Unix user. */
export interface AgentWithdrawal {
  account_id: string;
  username: string;
  roles: ('web' | 'database')[];
}

/**
 * Work that moves bytes on the server, done once: a database dumped into the task's `output`
 * artifact, or loaded from its `input` artifact.
 */
export type AgentTask = { action: 'database.dump'; database: string } | { action: 'database.load'; database: DatabaseSpec };

/**
 * What an agent is handed for one apply unit: a complete spec that carries only its own
 * secrets, and the generation it describes. The agent applies it with its local driver and
 * reports that generation (or why it failed).
 */
export type AgentUnit =
  | { kind: 'database'; key: string; generation: number; spec: DatabaseAccountSpec }
  | { kind: 'web'; key: string; generation: number; spec: AgentSiteSpec }
  | { kind: 'withdrawal'; key: string; generation: number; spec: AgentWithdrawal }
  | { kind: 'task'; key: string; generation: number; spec: AgentTask };

const AgentUnitKind = Type.Union([
  Type.Literal('database'),
  Type.Literal('web'),
  Type.Literal('withdrawal'),
  Type.Literal('task'),
]);
export type AgentUnitKind = AgentUnit['kind'];

/** What an agent says about one unit it was given: the listener validates it, the agent sends it. */
export const AgentReport = Type.Object(
  {
    kind: AgentUnitKind,
    key: Type.String({ minLength: 1, maxLength: 100 }),
    generation: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    /** Why the apply failed; absent when it succeeded. */
    error: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export type AgentReport = Static<typeof AgentReport>;

/**
 * A module's apply units as the agent listener serves them: the units of the accounts placed on
 * a server that it has yet to apply (pending or failed), and the recording of a report, which
 * refuses a unit the server does not own (`foreign`) or a generation it was never given (`future`).
 */
export interface AgentUnitSource {
  kind: AgentUnitKind;
  pending(db: Queryable, serverId: string): Promise<AgentUnit[]>;
  report(db: Queryable, serverId: string, report: AgentReport): Promise<'recorded' | 'foreign' | 'future'>;
  /**
   * Bytes a unit refers to (a site's release, as a tar.gz), streamed to the agent that applies
   * it; `foreign` for another server's unit, undefined for what the unit does not name.
   */
  artifact?(db: Queryable, serverId: string, key: string, name: string): Promise<Readable | 'foreign' | undefined>;
  /** Bytes the agent sends for a unit (a task's output), stored; `foreign` or undefined as above. */
  receive?(db: Queryable, serverId: string, key: string, name: string, body: Readable): Promise<'stored' | 'foreign' | undefined>;
}
