/**
 * The resources the CLI offers as `berth <resource> <verb>`: each verb is one operation of the
 * OpenAPI document (`METHOD path`); its flags come from that operation's parameters and body.
 * `columns` are what `-o table` shows of a list.
 */
export interface ResourceDef {
  name: string;
  about: string;
  columns: string[];
  verbs: Record<string, string>;
  /** Path parameters that name a parent of the resource: given as flags (`--domain`), not as the argument. */
  parents?: string[];
}

const crud = (collection: string, item: string, without: string[] = []) =>
  Object.fromEntries(
    Object.entries({
      list: `get ${collection}`,
      get: `get ${item}`,
      create: `post ${collection}`,
      update: `patch ${item}`,
      delete: `delete ${item}`,
    }).filter(([verb]) => !without.includes(verb)),
  );

export const RESOURCES: ResourceDef[] = [
  {
    name: 'resellers',
    about: 'Resellers (operator only)',
    columns: ['id', 'name', 'status'],
    verbs: crud('/v1/resellers', '/v1/resellers/{reseller_id}'),
  },
  {
    name: 'servers',
    about: 'Hosting servers and their agents (operator only)',
    columns: ['id', 'name', 'roles', 'status', 'ipv4'],
    verbs: {
      ...crud('/v1/servers', '/v1/servers/{server_id}'),
      enrolment: 'post /v1/servers/{server_id}/enrolment',
      drain: 'post /v1/servers/{server_id}/drain',
    },
  },
  { name: 'plans', about: 'Hosting plans', columns: ['id', 'name'], verbs: crud('/v1/plans', '/v1/plans/{plan_id}') },
  {
    name: 'accounts',
    about: 'Hosting accounts',
    columns: ['id', 'username', 'status', 'plan_id', 'contact_email'],
    verbs: {
      ...crud('/v1/accounts', '/v1/accounts/{account_id}'),
      suspend: 'post /v1/accounts/{account_id}/suspend',
      unsuspend: 'post /v1/accounts/{account_id}/unsuspend',
      usage: 'get /v1/accounts/{account_id}/usage',
      'login-link': 'post /v1/accounts/{account_id}/login-links',
      ssh: 'get /v1/accounts/{account_id}/ssh',
      'set-ssh': 'put /v1/accounts/{account_id}/ssh',
      move: 'post /v1/accounts/{account_id}/move',
    },
  },
  {
    name: 'usage',
    about: "Every reachable account's usage as last measured (for billing)",
    columns: ['id', 'username', 'updated_at'],
    verbs: { list: 'get /v1/usage' },
  },
  {
    name: 'moves',
    about: 'Moves of accounts between servers (operator only)',
    columns: ['id', 'account_id', 'status', 'cutover', 'bytes_copied'],
    verbs: {
      list: 'get /v1/moves',
      get: 'get /v1/moves/{move_id}',
      cutover: 'post /v1/moves/{move_id}/cutover',
      cancel: 'post /v1/moves/{move_id}/cancel',
    },
  },
  {
    name: 'tokens',
    about: 'API tokens',
    columns: ['id', 'name', 'scopes', 'expires_at'],
    verbs: crud('/v1/tokens', '/v1/tokens/{token_id}', ['update']),
  },
  {
    name: 'domains',
    about: 'Domains and their zones',
    columns: ['id', 'name', 'account_id', 'mail_enabled', 'sync_state'],
    verbs: {
      ...crud('/v1/domains', '/v1/domains/{domain}', []),
      dkim: 'get /v1/domains/{domain}/dkim',
      'rotate-dkim': 'post /v1/domains/{domain}/dkim/rotate',
      dnssec: 'get /v1/domains/{domain}/dnssec',
      'set-dnssec': 'put /v1/domains/{domain}/dnssec',
      'check-dnssec': 'post /v1/domains/{domain}/dnssec/check',
    },
  },
  {
    name: 'records',
    about: "DNS records of a domain's zone (--domain)",
    parents: ['domain'],
    columns: ['id', 'name', 'type', 'ttl', 'content'],
    verbs: crud('/v1/domains/{domain}/records', '/v1/domains/{domain}/records/{record_id}'),
  },
  {
    name: 'emails',
    about: 'Mailboxes',
    columns: ['id', 'address', 'quota_mb', 'status', 'sync_state'],
    verbs: crud('/v1/emails', '/v1/emails/{email_id}'),
  },
  {
    name: 'email-forwarders',
    about: 'Addresses forwarded elsewhere',
    columns: ['id', 'address', 'destinations', 'sync_state'],
    verbs: crud('/v1/email-forwarders', '/v1/email-forwarders/{forwarder_id}'),
  },
  {
    name: 'databases',
    about: 'MariaDB databases',
    columns: ['id', 'name', 'account_id', 'sync_state'],
    verbs: {
      ...crud('/v1/databases', '/v1/databases/{database_id}'),
      grants: 'get /v1/databases/{database_id}/users',
      grant: 'put /v1/databases/{database_id}/users/{user_id}',
      revoke: 'delete /v1/databases/{database_id}/users/{user_id}',
    },
  },
  {
    name: 'database-users',
    about: 'MariaDB users',
    columns: ['id', 'username', 'account_id', 'status', 'sync_state'],
    verbs: crud('/v1/database-users', '/v1/database-users/{user_id}'),
  },
  {
    name: 'sites',
    about: 'Web sites',
    columns: ['id', 'hostname', 'runtime', 'status', 'sync_state'],
    verbs: {
      ...crud('/v1/sites', '/v1/sites/{site_id}'),
      suspend: 'post /v1/sites/{site_id}/suspend',
      unsuspend: 'post /v1/sites/{site_id}/unsuspend',
      certificate: 'get /v1/sites/{site_id}/certificate',
    },
  },
  {
    name: 'deployments',
    about: "A site's deployments (--site); `berth deploy` makes one",
    parents: ['site_id'],
    columns: ['id', 'status', 'size_bytes', 'file_count', 'created_at'],
    verbs: {
      list: 'get /v1/sites/{site_id}/deployments',
      get: 'get /v1/sites/{site_id}/deployments/{deployment_id}',
      activate: 'post /v1/sites/{site_id}/deployments/{deployment_id}/activate',
    },
  },
  {
    name: 'cron-jobs',
    about: "An account's cron jobs (--account)",
    parents: ['account_id'],
    columns: ['id', 'name', 'schedule', 'enabled', 'next_run_at', 'sync_state'],
    verbs: {
      ...crud('/v1/accounts/{account_id}/cron-jobs', '/v1/accounts/{account_id}/cron-jobs/{cron_job_id}'),
      run: 'post /v1/accounts/{account_id}/cron-jobs/{cron_job_id}/run',
      runs: 'get /v1/accounts/{account_id}/cron-jobs/{cron_job_id}/runs',
    },
  },
  {
    name: 'ssh-keys',
    about: "An account's SSH public keys (--account)",
    parents: ['account_id'],
    columns: ['id', 'name', 'type', 'fingerprint_sha256', 'sync_state'],
    verbs: crud('/v1/accounts/{account_id}/ssh-keys', '/v1/accounts/{account_id}/ssh-keys/{ssh_key_id}'),
  },
  {
    name: 'backups',
    about: 'Backups of an account',
    columns: ['id', 'account_id', 'status', 'size_bytes', 'created_at'],
    verbs: { ...crud('/v1/backups', '/v1/backups/{backup_id}', ['update']), restore: 'post /v1/backups/{backup_id}/restore' },
  },
  {
    name: 'backup-schedules',
    about: 'Backup schedules',
    columns: ['id', 'account_id', 'cron', 'retain', 'enabled'],
    verbs: crud('/v1/backup-schedules', '/v1/backup-schedules/{schedule_id}'),
  },
  {
    name: 'webhooks',
    about: 'Webhook endpoints',
    columns: ['id', 'url', 'enabled', 'event_types'],
    verbs: {
      ...crud('/v1/webhooks', '/v1/webhooks/{webhook_id}'),
      'rotate-secret': 'post /v1/webhooks/{webhook_id}/rotate-secret',
      test: 'post /v1/webhooks/{webhook_id}/test',
      deliveries: 'get /v1/webhooks/{webhook_id}/deliveries',
    },
  },
  {
    name: 'operations',
    about: 'Asynchronous operations',
    columns: ['id', 'type', 'status', 'progress', 'created_at'],
    verbs: {
      list: 'get /v1/operations',
      get: 'get /v1/operations/{operation_id}',
      cancel: 'post /v1/operations/{operation_id}/cancel',
    },
  },
  {
    name: 'events',
    about: 'The event feed (`berth events tail` follows it)',
    columns: ['id', 'type', 'account_id', 'created_at'],
    verbs: { list: 'get /v1/events', get: 'get /v1/events/{event_id}' },
  },
];
