import { JOBS } from '../jobs/names.js';
import { periodic } from '../jobs/periodic.js';
import type { JobQueue } from '../jobs/queue.js';

/** The apply units (each job re-renders a whole unit, a site's creation and deletion included): running one again is always safe. */
const APPLY_QUEUES = [JOBS.dnsApply, JOBS.mailApply, JOBS.webApply, JOBS.databaseApply, JOBS.cronApply, JOBS.sshApply] as const;

/**
 * No change is lost while a daemon is down: an apply is first retried by the queue with
 * backoff (5 s doubling, five times); an apply that ran out of those retries — the daemon
 * was down longer — is given one more attempt every `intervalMs`, until it succeeds. Applying
 * a unit renders its latest state, so a late attempt never brings back an old one; a
 * removal (a deleted zone, site or mail domain) is retried the same way.
 */
export function applyResync(jobs: JobQueue, intervalMs: number, onError: (err: unknown) => void) {
  return periodic(
    async () => {
      for (const name of APPLY_QUEUES) if ((await jobs.retryFailed(name)) > 0) jobs.wake(name);
    },
    intervalMs,
    onError,
  );
}
