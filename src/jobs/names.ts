/** Every job queue of the service, created at start. */
export const JOBS = {
  accountTerminate: 'account.terminate',
  backupCreate: 'backup.create',
  backupRestore: 'backup.restore',
  dnsApply: 'dns.apply',
  dnsChangeApply: 'dns.change.apply',
  housekeeping: 'housekeeping',
  mailApply: 'mail.apply',
  siteProvision: 'site.provision',
  siteDelete: 'site.delete',
  siteDeploy: 'site.deploy',
  webApply: 'web.apply',
  webhookDeliver: 'webhook.deliver',
} as const;

export const QUEUE_NAMES: string[] = Object.values(JOBS);
