import { Type } from 'typebox';
import type { ALL_SCOPES } from '../../auth/scopes.js';
import { callerOf } from '../../http/auth.js';
import { resourceRoutes } from '../../http/crud.js';
import { baseUrl } from '../../http/errors.js';
import { type App, paramId } from '../../http/routes.js';
import { IdParams, PageOnlyQuery } from '../../http/schemas.js';
import type { loginLinks } from './login-links.js';
import { CreateSession, CreateToken, Me } from './schemas.js';
import type { TokensService } from './service.js';

export function tokenRoutes(
  app: App,
  svc: TokensService,
  links: ReturnType<typeof loginLinks>,
  configuredBase: string | null,
): void {
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

  app.post(
    '/v1/accounts/:account_id/login-links',
    {
      config: { scope: 'tokens:write', reach: async (req) => links.reachable(callerOf(req), paramId(req)) },
      schema: {
        tags: ['accounts'],
        operationId: 'createLoginLink',
        summary: 'Make a login link into the panel',
        description:
          "Single sign-on for a billing system's client area: a link that opens the panel as the account, valid for 60 seconds and usable once. The operator or the account's reseller makes it (an account's own token gets 403); it mints a token (`tokens:write`). Whoever opens it exchanges its code with `POST /v1/sessions` for a token of that account alone, with the scopes of the token that made the link, for 8 hours. Announced as `account.login_link.used` when exchanged.",
        params: IdParams('acc'),
        response: { 201: Type.Ref('LoginLink') },
      },
    },
    async (req, reply) => reply.code(201).send(await links.create(callerOf(req), paramId(req), baseUrl(req, configuredBase))),
  );

  app.post(
    '/v1/sessions',
    {
      config: { auth: false },
      schema: {
        tags: ['accounts'],
        operationId: 'createSession',
        summary: 'Exchange a login code for a token',
        description:
          'No token needed: the code is the credential. It is exchanged once, within 60 s of the link being made, for `{token, account_id, expires_at}`; a used, expired or unknown code is a 401 `invalid_login_code`. The token speaks for the account alone, with the scopes of the token that made the link, and expires within 8 hours (no later than that token).',
        security: [],
        'x-errors': ['invalid_login_code'],
        body: CreateSession,
        response: { 201: Type.Ref('Session') },
      },
    },
    async (req, reply) => reply.code(201).send(await links.exchange(req.body.login_code)),
  );
}
