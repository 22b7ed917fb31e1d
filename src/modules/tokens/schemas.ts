import { Type, type Static } from 'typebox';
import { ALL_SCOPES } from '../../auth/scopes.js';
import { Id, Name, Nullable, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';

/** Tokens as the API shows and takes them: each shape declared once (validator, type, document). */

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
export const TokenSchema = Type.Object(tokenFields, {
  $id: 'Token',
  description: 'An API token. The secret is shown once, on creation.',
});
const CreatedToken = Type.Object(
  { ...tokenFields, secret: Type.String({ maxLength: 100, description: 'The bearer secret. Shown only in this response.' }) },
  { $id: 'CreatedToken' },
);
export const CreateToken = Type.Object(
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

export type Token = Static<typeof TokenSchema>;
export type CreateToken = Static<typeof CreateToken>;

/** `GET /v1/me`: who the token speaks for, and what it reaches. */
export const Me = Type.Object({
  principal: PrincipalSchema,
  token: Type.Ref('Token'),
  scopes: Scopes,
  reach: Type.Object({
    reseller_id: Nullable(Id('rsl')),
    account_ids: Nullable(AccountIds),
    description: Type.String({ maxLength: 200 }),
  }),
});

export const LoginLinkSchema = Type.Object(
  {
    url: Type.String({
      maxLength: 2000,
      description:
        'The panel at `BERTH_BASE_URL` with the code in its fragment (`/panel/#login_code=...`), which no server log sees.',
    }),
    login_code: Type.String({
      maxLength: 100,
      description: 'The single-use code itself, for a panel of your own: exchange it with `POST /v1/sessions`.',
    }),
    account_id: Id('acc'),
    expires_at: Type.String({ format: 'date-time', maxLength: 40, description: '60 seconds from now.' }),
  },
  { $id: 'LoginLink' },
);
export type LoginLink = Static<typeof LoginLinkSchema>;

export const CreateSession = Type.Object(
  { login_code: Type.String({ minLength: 1, maxLength: 100, description: 'The code of a login link.' }) },
  { additionalProperties: false },
);

export const SessionSchema = Type.Object(
  {
    token: Type.String({ maxLength: 100, description: 'A bearer token of the account: shown once.' }),
    account_id: Id('acc'),
    expires_at: Type.String({ format: 'date-time', maxLength: 40, description: 'At most 8 hours from now.' }),
  },
  { $id: 'Session' },
);
export type Session = Static<typeof SessionSchema>;

export const tokenSchemas = [TokenSchema, CreatedToken, LoginLinkSchema, SessionSchema];
