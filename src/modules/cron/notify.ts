import nodemailer from 'nodemailer';
import type { Config } from '../../config.js';
import type { Db, Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { CronRunRecord } from '../../provisioning/render/cron.js';
import { findAccountById } from '../accounts/index.js';
import * as repo from './repo.js';

/** Whether a finished run is mailed, by the job's `notify.on`. */
const wanted = (on: repo.JobFields['notify']['on'], status: CronRunRecord['status']) =>
  on === 'always' ? status !== 'running' : on === 'failure' && (status === 'failed' || status === 'timed_out');

/** Queues the run's mail in the transaction that records its end, when its job asks for one. */
export async function queueNotification(tx: Queryable, jobs: JobQueue, job: repo.JobRow, run: CronRunRecord): Promise<void> {
  if (wanted(job.notify.on, run.status)) await jobs.send(tx, JOBS.cronNotify, { run_id: run.id });
}

/**
 * The `cron.notify` job: mails a run's status and output tail to the job's `notify.email` (the
 * account's contact address when none), through the provider's mail host (`BERTH_SMTP_URL`);
 * retried by the queue while that host does not take it. Without a mail host nothing is sent.
 */
export function cronNotifier(db: Db, smtp: Config['smtp'], log: (message: string) => void) {
  const transport = smtp.url ? nodemailer.createTransport(smtp.url) : null;
  return async (data: Record<string, unknown>): Promise<void> => {
    const run = await repo.findRunById(db, String(data.run_id));
    const job = run && (await repo.findJobById(db, run.job_id));
    if (!run || !job) return;
    if (!transport) return log(`cron job ${job.id}: notify asked for, but no BERTH_SMTP_URL is set; not mailed`);
    const to = job.notify.email ?? (await findAccountById(db, job.account_id))?.contact_email;
    if (!to) return;
    const outcome = run.exit_code === null ? run.status : `${run.status}, exit code ${run.exit_code}`;
    await transport.sendMail({
      from: smtp.from,
      to,
      subject: `Cron job "${job.name}": ${outcome}`,
      text: [
        `The cron job "${job.name}" (${job.id}) ran at ${run.started_at} (${run.trigger}): ${outcome}.`,
        run.reason ? `\n${run.reason}` : '',
        '\nThe end of its output:\n',
        run.output_tail || '(no output)',
      ].join('\n'),
    });
  };
}
