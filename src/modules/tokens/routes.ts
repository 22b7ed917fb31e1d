import { Type } from 'typebox';
import { ALL_SCOPES } from '../../auth/scopes.js';
import { callerOf } from '../../http/auth.js';
import { deleteRoute, getRoute, listRoute, reachOf } from '../../http/crud.js';
import { sendCreated, type App } from '../../http/routes.js';
import { Id, Name, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';
import type { TokensService } from './service.js';

const Scope = StringEnum(ALL_SCOPES);
const Scopes = Type.Array(Scope, { minItems: 1, maxItems: ALL_SCOPES.length, uniqueItems: true });
const PrincipalSchema = Type.Object(
  {
    kind: StringEnum(['operator', 'reseller', 'account'] as const),
    id: Nullable(Type.String({ maxLength: 40, pattern: '^(rsl|acc)_[0-9a-z]{26}$' })),
  },
  { additionalProperties: false },
);
const AccountIds = Type.Array(Id('acc'), { maxItems: 1000, uniqueItems: true });
const AllowedIps = Type.Array(Type.String({ maxLength: 43 }), { maxItems: 100 });

const tokenFields = {
  id: Id('tok'),
  name: Name,
  principal: PrincipalSchema,
  scopes: Scopes,
  account_ids: Nullable(AccountIds),
  expires_at: Nullable(Timestamp),
  allowed_ips: AllowedIps,
  last_used_at: Nullable(Timestamp),
  prefix: Type.String({ maxLength: 12, description: 'The first 12 characters of the secret, for display.' }),
  ...ResourceMeta,
};
const TokenSchema = Type.Object(tokenFields, {
  $id: 'Token',
  description: 'An API token. The secret is shown once, on creation.',
});
const CreatedToken = Type.Object(
  { ...tokenFields, secret: Type.String({ maxLength: 100, description: 'The bearer secret. Shown only in this response.' }) },
  { $id: 'CreatedToken' },
);
const CreateBody = Type.Object(
  {
    name: Name,
    principal: Type.Optional(PrincipalSchema),
    scopes: Scopes,
    account_ids: Type.Optional(Nullable(AccountIds)),
    expires_at: Type.Optional(Nullable(Timestamp)),
    allowed_ips: Type.Optional(AllowedIps),
  },
  { additionalProperties: false },
);

export function tokenRoutes(app: App, svc: TokensService): void {
  const path = '/v1/tokens';
  const tags = ['tokens'];
  const reach = reachOf(svc.load);

  listRoute(app, {
    path,
    tags,
    operationId: 'listTokens',
    summary: 'List tokens',
    description: "Tokens of the principals in the caller's reach.",
    scope: 'tokens:read',
    querystring: Type.Object(PageQuery, { additionalProperties: false }),
    item: 'Token',
    list: (caller, _query, page) => svc.list(caller, page),
  });

  app.post(
    path,
    {
      config: { scope: 'tokens:write' },
      schema: {
        tags,
        operationId: 'createToken',
        summary: 'Create a token',
        description:
          "For the caller (no `principal`) or a principal below it. The new token lies inside the calling token: its scopes, its `account_ids` (accounts both the calling token and the new principal reach), its `expires_at` (no later) and its `allowed_ips` (ranges inside the calling token's). Omitted, `account_ids`, `expires_at` and `allowed_ips` are the calling token's; anything broader is a 422 naming the field (`out_of_reach`, `after_parent`). The `secret` is returned once.",
        body: CreateBody,
        response: { 201: Type.Ref('CreatedToken') },
      },
    },
    async (req, reply) => sendCreated(reply, path, await svc.create(callerOf(req), req.body)),
  );

  getRoute(app, {
    path,
    prefix: 'tok',
    tags,
    resource: 'Token',
    summary: 'Get a token',
    scope: 'tokens:read',
    reach,
    get: svc.get,
  });

  deleteRoute(app, {
    path,
    prefix: 'tok',
    tags,
    operationId: 'revokeToken',
    summary: 'Revoke a token',
    description: 'Takes effect at once in this process and within seconds in others.',
    scope: 'tokens:write',
    reach,
    remove: svc.revoke,
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
        response: {
          200: Type.Object({
            principal: PrincipalSchema,
            token: Type.Ref('Token'),
            scopes: Scopes,
            reach: Type.Object({
              reseller_id: Nullable(Id('rsl')),
              account_ids: Nullable(AccountIds),
              description: Type.String({ maxLength: 200 }),
            }),
          }),
        },
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

export const tokenSchemas = [TokenSchema, CreatedToken];
