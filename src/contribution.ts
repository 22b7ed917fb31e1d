import type { TSchema } from 'typebox';
import type { Listing } from './archives/listing.js';
import type { ArchivedDir } from './archives/pack.js';
import type { Unpacked } from './archives/unpack.js';
import type { Queryable } from './db/client.js';
import type { GaugeSource } from './http/metrics.js';
import type { App } from './http/routes.js';
import type { Worker } from './jobs/queue.js';

/** A loop every process runs while it runs jobs (jobs/periodic.ts). */
interface Loop {
  start(): void;
  stop(): Promise<void>;
}

/**
 * What a module adds to the app. app.ts registers every module's parts the same way: schemas
 * before the plugins, routes, workers, housekeeping tasks and loops.
 */
export interface Contribution {
  schemas?: TSchema[];
  routes?: (app: App) => void;
  workers?: Worker[];
  loops?: Loop[];
  /** What the hourly housekeeping job runs: pruning of what is kept for a while only, and looks that keep state current. */
  housekeeping?: ((now: Date) => Promise<unknown>)[];
  /** Gauges for /metrics. */
  gauges?: GaugeSource[];
}

/** The series `unit` of the gauge of apply units in `sync_state: error` (each module its own kind). */
export const syncErrorGauge = (unit: string, count: () => Promise<number>): GaugeSource => ({
  name: 'berth_sync_errors',
  help: 'Apply units whose last apply failed (sync_state error), by kind.',
  labelNames: ['unit'],
  read: async () => [[{ unit }, await count()]],
});

/** A worker whose job data names an operation. */
export const operationWorker = (queue: string, run: (operationId: string) => Promise<void>): Worker => ({
  queue,
  run: (data) => run(String(data.operation_id)),
});

/** The parts a backup may `include`, in the order the API lists them. */
export const BACKUP_PARTS = ['sites', 'emails', 'dns', 'databases', 'cron_jobs', 'ssh'] as const;
export type BackupPartName = (typeof BACKUP_PARTS)[number];

/** Servers by role (a move's source), as the servers module names them. */
export interface PartServers {
  web?: string;
  mail?: string;
  database?: string;
}

/**
 * A move's copy, staged twice: while the source still serves, then once it is frozen (`final`).
 * Each part keeps what it needs in `listings` to fetch only what changed the second time
 * (archives/refresh.ts); what would be copied whole both times (a database's dump) waits for the
 * final copy, which is verified against the source.
 */
export interface MoveCopy {
  listings: string;
  final: boolean;
  /** The servers the account moves to. */
  to: PartServers;
}

/** The regular files an unpacking wrote under `dir` (relative to where it unpacked): how many, and their bytes. */
export type UnpackedUnder = (dir: string) => Unpacked;

/** What a module's part of a backup put into the archive. */
export interface StagedPart {
  /** Its members of `manifest.json`: its resources as the API shows them. */
  manifest: Record<string, unknown>;
  /** The account's directories it archives (each under its own name in the archive). */
  dirs: ArchivedDir[];
  /** Its counts for the backup's `contents`. */
  contents: Record<string, number>;
  /** In a move's final copy: what it verified of the staging (`Copied`). */
  copied?: Copied;
}

/**
 * The listings of a move's final copy in the staging, as verified against the frozen source, by
 * their directory under the staging: sending the copy on needs no walk of it (the freeze waits).
 */
export type Copied = Record<string, Listing>;

/**
 * A module's part of an account's backup and restore (`include` names it): the backups module
 * only orchestrates the parts, in the order given, and knows none of their resources.
 */
export interface BackupPart {
  name: BackupPartName;
  /** The role whose servers hold its data: a move carries the part only when that role moves. */
  role?: keyof PartServers;
  /**
   * Writes its generated files (secrets mode 0600) into `staging`, taking what servers hold from
   * the account's servers, or from the servers `from` names (a move copies from its source, and
   * keeps its copy up to date with `copy`; the caller does so with the `dirs` returned).
   */
  stage(accountId: string, staging: string, from?: PartServers, copy?: MoveCopy): Promise<StagedPart>;
  /**
   * Puts back what `manifest` and `staging` (the unpacked archive) hold, re-creating what is
   * gone; running it again gives the same result. A refusal the caller should read is a
   * `RestoreRefused`. `unpacked` tells what the unpacking wrote under a directory of `staging`,
   * so that nothing it has just written is listed again.
   */
  restore(accountId: string, manifest: Record<string, unknown>, staging: string, unpacked: UnpackedUnder): Promise<void>;
  /**
   * A move's copy (what `stage` wrote) put on the servers the account is placed on now: the data
   * of the resources it has now (files, messages, rows of its databases), no resource changed,
   * none re-created. Running it again gives the same result.
   */
  land(accountId: string, staging: string): Promise<void>;
  /**
   * A move's copy (what `stage` wrote, kept up to date) sent on to the servers the account moves
   * to, while the source still serves it and again once it is frozen (`copy.final`, then made
   * ready to go live there at the cutover), so that landing it moves no bytes. Running it again
   * sends only what changed.
   */
  sendAhead?(accountId: string, staging: string, copy: MoveCopy, copied?: Copied): Promise<void>;
  /** In the cutover's transaction: what was sent ahead is what the resources use where they go. */
  cutOver?(tx: Queryable, accountId: string, staging: string): Promise<void>;
  /** A move that rolls back: what was sent ahead goes from the servers it was sent to. */
  discardAhead?(accountId: string, copy: MoveCopy): Promise<void>;
}

/**
 * A module's share of an account on the servers of one role, as a move needs it: whether every
 * unit of it is applied where the account is placed (a freeze has reached the source), and taking
 * it away from the local server when the role moves to another (the local server is applied
 * in-process: there is no agent to hand it a withdrawal). What the control plane keeps for every
 * server (the sites' releases, which agents fetch) stays. Both are safe to run again.
 */
export interface AccountShare {
  role: 'web' | 'mail' | 'database';
  applied(accountId: string): Promise<boolean>;
  withdrawLocal(account: { id: string; username: string }): Promise<void>;
  /**
   * The local server, left by the account, forwards what it served of it to the role's new
   * server at `to` (its sites proxied, its mail relayed) until `withdrawLocal`; a role with
   * nothing to forward (databases, cron jobs, SSH) has none.
   */
  forwardLocal?(accountId: string, to: string): Promise<void>;
}

/** Why a restore stopped, with the code its operation records. */
export class RestoreRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
