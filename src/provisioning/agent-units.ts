import type { Queryable } from '../db/client.js';
import type { DatabaseAccountSpec } from './render/mariadb.js';

/**
 * What an agent is handed for one apply unit: a complete spec that carries only its own
 * secrets, and the generation it describes. The agent applies it with its local driver and
 * reports that generation (or why it failed).
 */
export type AgentUnit = { kind: 'database'; key: string; generation: number; spec: DatabaseAccountSpec };
export type AgentUnitKind = AgentUnit['kind'];

/** What an agent says about one unit it was given. */
export interface AgentReport {
  kind: AgentUnitKind;
  key: string;
  generation: number;
  /** Why the apply failed; absent when it succeeded. */
  error?: string;
}

/**
 * A module's apply units as the agent listener serves them: the units of the accounts placed on
 * a server that it has yet to apply (pending or failed), and the recording of a report, which
 * refuses a unit the server does not own (`foreign`) or a generation it was never given (`future`).
 */
export interface AgentUnitSource {
  kind: AgentUnitKind;
  pending(db: Queryable, serverId: string): Promise<AgentUnit[]>;
  report(db: Queryable, serverId: string, report: AgentReport): Promise<'recorded' | 'foreign' | 'future'>;
}
