import type { ALL_SCOPES } from '../../auth/scopes.js';
import { callerOf } from '../../http/auth.js';
import { resourceRoutes } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { PageOnlyQuery } from '../../http/schemas.js';
import { CreateToken, Me } from './schemas.js';
import type { TokensService } from './service.js';

export function tokenRoutes(app: App, svc: TokensService): void {
  resourceRoutes(app, {
    path: '/v1/tokens',
    prefix: 'tok',
    tags: ['tokens'],
    resource: 'Token',
    area: 'tokens',
    load: svc.load,
    list: {
      operationId: 'listTokens',
      summary: 'List tokens',
      description: "Tokens of the principals in the caller's reach.",
      querystring: PageOnlyQuery,
      list: (caller, _query, page) => svc.list(caller, page),
    },
    create: {
      operationId: 'createToken',
      summary: 'Create a token',
      description:
        "For the caller (no `principal`) or a principal below it. The new token lies inside the calling token: its scopes, its `account_ids` (accounts both the calling token and the new principal reach), its `expires_at` (no later) and its `allowed_ips` (ranges inside the calling token's). Omitted, `account_ids`, `expires_at` and `allowed_ips` are the calling token's; anything broader is a 422 naming the field (`out_of_reach`, `after_parent`). The `secret` is returned once.",
      body: CreateToken,
      response: 'CreatedToken',
      create: svc.create,
    },
    get: {
      summary: 'Get a token',
      get: svc.get,
    },
    remove: {
      operationId: 'revokeToken',
      summary: 'Revoke a token',
      description: 'Takes effect at once in this process and within seconds in others.',
      remove: svc.revoke,
    },
  });

  app.get(
    '/v1/me',
    {
      schema: {
        tags: ['me'],
        operationId: 'getMe',
        description:
          'Who the token speaks for (operator, reseller or account), its scopes, and the token itself: the call to check a token with.',
        summary: 'The calling token and its reach',
        response: { 200: Me },
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const token = await svc.current(caller);
      const describe = { operator: 'every resource', reseller: "the reseller's accounts", account: 'this account' }[
        caller.principal.kind
      ];
      return {
        principal: caller.principal,
        token,
        scopes: caller.scopes as (typeof ALL_SCOPES)[number][],
        reach: {
          reseller_id: caller.resellerId,
          account_ids: caller.accountIds ?? (caller.principal.kind === 'account' ? [caller.principal.id as string] : null),
          description: caller.accountIds ? `${describe}, narrowed to account_ids` : describe,
        },
      };
    },
  );
}
