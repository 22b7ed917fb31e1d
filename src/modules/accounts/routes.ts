import { callerOf } from '../../http/auth.js';
import { itemRoute, listRoute, reachOf, resourceRoutes } from '../../http/crud.js';
import { ifMatchVersion } from '../../http/etag.js';
import type { App } from '../../http/routes.js';
import { IdParams, IfMatchHeaders, SuspendBody } from '../../http/schemas.js';
import { AccountListQuery, AccountMutable, AccountUsage, CreateAccount, UsageListQuery } from './schemas.js';
import type { AccountsService } from './service.js';

export function accountRoutes(app: App, svc: AccountsService): void {
  const path = '/v1/accounts';
  const tags = ['accounts'];
  const reach = reachOf(svc.load);
  const params = IdParams('acc');
  const write = { tags, scope: 'accounts:write' as const, reach, params };

  resourceRoutes(app, {
    path,
    prefix: 'acc',
    tags,
    resource: 'Account',
    area: 'accounts',
    load: svc.load,
    list: { operationId: 'listAccounts', summary: 'List hosting accounts', querystring: AccountListQuery, list: svc.list },
    create: {
      operationId: 'createAccount',
      summary: 'Create a hosting account',
      description:
        "`reseller_id` is the caller's for resellers; operators may set it. The plan must be global or the reseller's own. A username already taken is 409 `already_exists`; a reseller past its `max_accounts` is 403 `quota_exceeded`.",
      body: CreateAccount,
      response: 'Account',
      create: svc.create,
    },
    get: {
      summary: 'Get a hosting account',
      description:
        'The account with its effective `limits` (plan plus overrides) and its live `usage`. The `ETag` follows `version`; `usage` is measured and not part of it.',
      get: svc.get,
    },
    update: {
      noun: 'hosting account',
      description: 'A plan (or limit override) whose limits the usage exceeds is refused: 403 quota_exceeded listing each limit.',
      mutable: AccountMutable,
      update: svc.update,
    },
  });

  itemRoute(app, {
    ...write,
    method: 'DELETE',
    path: `${path}/:account_id`,
    operationId: 'terminateAccount',
    summary: 'Terminate a hosting account',
    description:
      'Ends the account: 202, it turns `terminating` and an operation removes its sites, mailboxes, zones, backups and tokens, then the account (404 afterwards). A repeated DELETE returns the same operation.',
    headers: IfMatchHeaders,
    response: 'AccountTermination',
    accepted: true,
    run: (caller, { account_id }, _body, req) => svc.terminate(caller, account_id, ifMatchVersion(req)),
  });

  itemRoute(app, {
    ...write,
    method: 'POST',
    path: `${path}/:account_id/suspend`,
    operationId: 'suspendAccount',
    summary: 'Suspend a hosting account',
    description: 'Its resources become read-only for its own principal.',
    body: SuspendBody,
    response: 'Account',
    run: (caller, { account_id }, { reason }) => svc.suspend(caller, account_id, reason),
  });

  itemRoute(app, {
    ...write,
    method: 'POST',
    path: `${path}/:account_id/unsuspend`,
    operationId: 'unsuspendAccount',
    summary: 'Unsuspend a hosting account',
    description:
      'Returns an `active` account: sites serve again and logins are allowed again. Announced as `account.unsuspended`.',
    response: 'Account',
    run: (caller, { account_id }) => svc.unsuspend(caller, account_id),
  });

  listRoute(app, {
    path: '/v1/usage',
    tags,
    operationId: 'listUsage',
    summary: "Every reachable account's usage, for a billing system's usage update",
    description:
      "One page of accounts with their usage as last measured (every `BERTH_USAGE_METER_MS`; `GET /v1/accounts/{account_id}/usage` measures one now). `updated_since` keeps the accounts whose usage changed since then; `reseller_id` a reseller's. `next_cursor` (also in the `Link` header) leads to the next page.",
    scope: 'accounts:read',
    querystring: UsageListQuery,
    item: 'AccountUsageRecord',
    list: svc.listUsage,
  });

  app.get(
    `${path}/:account_id/usage`,
    {
      config: { scope: 'accounts:read', reach },
      schema: {
        tags,
        operationId: 'getAccountUsage',
        summary: 'Usage against limits',
        description: 'Measured now: counts from the database, disk from the files.',
        params,
        response: { 200: AccountUsage },
      },
    },
    async (req) => svc.usage(callerOf(req), req.params.account_id),
  );
}
