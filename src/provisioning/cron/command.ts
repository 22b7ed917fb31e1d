import { runCronJob } from './runner.js';

/** `berth cron-run STATE_DIR JOB_ID [--run RUN_ID]`: one run of a job (runner.ts); exit code 0 once recorded. */
export async function cronRunCommand(args: string[]): Promise<number> {
  const [state, jobId, flag, runId] = args;
  if (!state || !jobId || (flag !== undefined && (flag !== '--run' || !runId)))
    throw new Error('usage: berth cron-run STATE_DIR JOB_ID [--run RUN_ID]');
  await runCronJob(state, jobId, runId);
  return 0;
}
