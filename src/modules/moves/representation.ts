import type { Queryable } from '../../db/client.js';
import { publishResourceEvent } from '../publishing/index.js';
import type { MoveRow } from './repo.js';
import type { Move } from './schemas.js';

export const toMove = (r: MoveRow): Move => ({
  id: r.id,
  account_id: r.account_id,
  from: r.from_servers,
  to: r.to_servers,
  cutover: r.cutover,
  from_backup: r.from_backup,
  status: r.status,
  steps: r.steps,
  bytes_total: r.bytes_total,
  bytes_copied: r.bytes_copied,
  error: r.error,
  frozen_at: r.frozen_at,
  cut_over_at: r.cut_over_at,
  forward_until: r.forward_until,
  completed_at: r.completed_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

export const moveEvent = (tx: Queryable, type: string, r: MoveRow) => publishResourceEvent(tx, type, 'move', r, toMove(r));
