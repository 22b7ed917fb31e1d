import { publicMessage } from '../lib/errors.js';

/** How an apply unit records its state: the generation applied, or why the apply failed. */
export interface UnitMarks {
  applied(generation: number): Promise<unknown>;
  failed(message: string): Promise<unknown>;
}

/**
 * The step every reconciler shares: a unit already applied at its generation is skipped (a
 * burst of changes costs one apply); otherwise it is applied and marked, or the failure is
 * recorded (`sync_state: error`) and rethrown so the queue retries with backoff.
 */
export async function applyUnit(
  unit: { generation: number; applied_generation: number },
  apply: () => Promise<unknown>,
  marks: UnitMarks,
): Promise<void> {
  if (unit.applied_generation >= unit.generation) return;
  try {
    await apply();
    await marks.applied(unit.generation);
  } catch (err) {
    await marks.failed(publicMessage(err));
    throw err;
  }
}
