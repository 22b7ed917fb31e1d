/**
 * Bodies that pass validation for the operations that need one, made from the ids of a test's
 * own resources (keyed by the collection segment before each id: `accounts`, `domains`, ...):
 * what the reach test and the fuzz test send so that the answer comes from past the schema.
 */
export const ZONE_TEXT = 'www 3600 IN A 192.0.2.7\n';
/** An Ed25519 public key no test holds twice on one account. */
const REACH_SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAfLsaq8dactENY8UaLxR+ZEtfi68kHFAewjONq2Ijms reach';
/** Bodies that pass validation, so the answer shows the reach check and not the schema's. */
export const BODIES: Record<string, (ids: Record<string, string>) => unknown> = {
  suspendAccount: () => ({ reason: 'reach test' }),
  suspendSite: () => ({ reason: 'reach test' }),
  createDnsRecord: () => ({ name: 'x', type: 'A', content: '192.0.2.1' }),
  replaceDnsRecord: () => ({ name: 'x', type: 'A', ttl: 3600, content: '192.0.2.1' }),
  syncDnsRecords: () => ({ records: [] }),
  updateDomainDnssec: () => ({ enabled: false }),
  createDnsChange: () => ({ create: [{ name: 'y', type: 'A', content: '192.0.2.2' }] }),
  restoreBackup: () => ({}),
  replaceSite: () => ({ aliases: [], runtime: 'static' }),
  putSiteCertificate: () => ({ certificate_pem: 'x', private_key_pem: 'y' }),
  createServer: () => ({ name: 'reach', roles: ['database'], ipv4: '192.0.2.10', capacity: { accounts: 1 } }),
  moveAccount: (i) => ({ to: { web: i.servers } }),
  // Creations that name a resource of A.
  createAccount: (i) => ({ username: 'reachb', contact_email: 'b@example.com', plan_id: i.plans }),
  createToken: (i) => ({ name: 'x', scopes: ['*'], principal: { kind: 'account', id: i.accounts } }),
  // A code names no resource: anyone may try one, and an unknown one is a 401 for all alike.
  createSession: () => ({ login_code: 'no-such-code' }),
  createDomain: (i) => ({ account_id: i.accounts, name: 'reach-b-new.com' }),
  createEmail: (i) => ({ address: `new@${i.domains}`, generate_password: true, quota_mb: 10 }),
  createEmailForwarder: (i) => ({ address: `fwd@${i.domains}`, destinations: ['x@example.org'] }),
  createSite: (i) => ({ account_id: i.accounts, hostname: `new.${i.domains}` }),
  createBackup: (i) => ({ account_id: i.accounts }),
  createBackupSchedule: (i) => ({ account_id: i.accounts, cron: '0 3 * * *', retain: 1 }),
  createDatabase: (i) => ({ account_id: i.accounts, name: 'reachb_db' }),
  createDatabaseUser: (i) => ({ account_id: i.accounts, username: 'reachb_user', generate_password: true }),
  putDatabaseGrant: () => ({ privileges: ['SELECT'] }),
  createCronJob: () => ({ name: 'reach', schedule: '@daily', command: { argv: ['true'] } }),
  createSshKey: () => ({ name: 'reach', public_key: REACH_SSH_KEY }),
  createWebhook: (i) => ({ url: 'https://hooks.example.com/b', event_types: ['*'], account_ids: [i.accounts] }),
};
