/** Every job queue of the service, created at start. */
export const JOBS = {
  accountMove: 'account.move',
  accountTerminate: 'account.terminate',
  backupCreate: 'backup.create',
  backupRestore: 'backup.restore',
  certificateIssue: 'certificate.issue',
  cronApply: 'cron.apply',
  cronNotify: 'cron.notify',
  databaseApply: 'database.apply',
  dnsApply: 'dns.apply',
  dnsChangeApply: 'dns.change.apply',
  housekeeping: 'housekeeping',
  mailApply: 'mail.apply',
  serverReaddress: 'server.readdress',
  siteDeploy: 'site.deploy',
  sshApply: 'ssh.apply',
  webApply: 'web.apply',
  webhookDeliver: 'webhook.deliver',
} as const;

export const QUEUE_NAMES: string[] = Object.values(JOBS);

/**
 * The apply queues and the field of their job data that names the unit. A job re-renders its
 * whole unit as it is when the job runs, so one waiting job per unit is enough: a job sent while
 * another for the same unit still waits is dropped (pg-boss's `short` policy, keyed by the unit).
 * That holds only if the waiting job sees the dropped sender's change, even when a worker takes
 * it before the sender commits: every change to a unit writes (so locks) the unit's row before
 * it sends the job, and every reconciler reads that row `FOR SHARE`, which waits for the writer
 * to commit. (On PostgreSQL a job taken in that window rendered the state before the change, and
 * the unit stayed `pending` with no job left to apply it.)
 */
export const UNIT_KEYS: Readonly<Partial<Record<string, string>>> = {
  [JOBS.dnsApply]: 'domain_id',
  [JOBS.mailApply]: 'domain_id',
  [JOBS.databaseApply]: 'account_id',
  [JOBS.cronApply]: 'account_id',
  [JOBS.sshApply]: 'account_id',
  [JOBS.webApply]: 'site_id',
  // Not an apply, but the same shape: the job obtains a certificate for the site as it is when
  // the job runs, so one waiting per site is enough (and one ACME order in flight per site).
  [JOBS.certificateIssue]: 'site_id',
};
