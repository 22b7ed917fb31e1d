import { Type, type Static } from 'typebox';
import { Id, PageQuery, ResourceMeta, StringEnum, SyncFields } from '../../http/schemas.js';
import { CHARSETS, COLLATIONS, PRIVILEGES } from './rules.js';

/** Databases, their users and grants as the API shows and takes them: each shape declared once. */

const DatabaseSync = SyncFields(
  "Whether the database server has the account's current databases, users and grants (applied together); `error` with `sync_error` while applies fail (they are retried).",
);
const Charset = StringEnum(CHARSETS as [string, ...string[]], { description: 'Default `utf8mb4`.' });
const Collation = Type.String({
  minLength: 1,
  maxLength: 64,
  description: `One of the charset's: ${Object.entries(COLLATIONS)
    .map(([c, list]) => `${c}: ${list.join(', ')}`)
    .join('; ')}. Default: the first of its charset's.`,
});
const Name = (what: string, max: number) =>
  Type.String({
    minLength: 1,
    maxLength: 100,
    description: `\`<account username>_<suffix>\`: the suffix 1-${max} characters of a-z, 0-9 and \`_\`; at most ${what === 'database' ? 64 : 80} characters in all. Unique on the server; immutable.`,
  });
const Password = Type.String({
  minLength: 1,
  maxLength: 1024,
  writeOnly: true,
  description:
    'At least 12 characters, no control characters, not containing the user name. Write-only: kept only as the hash MariaDB verifies.',
});
const GeneratePassword = Type.Boolean({ description: 'Generate a 24-character password, returned once in this response.' });
const UserStatus = StringEnum(['active', 'suspended'] as const, {
  description: '`suspended`: the user cannot log in (nor can any user of a suspended account); its open sessions are ended.',
});
const Privileges = Type.Array(StringEnum(['ALL', ...PRIVILEGES] as [string, ...string[]]), {
  minItems: 1,
  maxItems: PRIVILEGES.length,
  uniqueItems: true,
  description: '`["ALL"]`, or database-level privileges (`CREATE_TEMPORARY_TABLES` is `CREATE TEMPORARY TABLES`).',
});

export const Database = Type.Object(
  {
    id: Id('db'),
    account_id: Id('acc'),
    name: Type.String({ maxLength: 64 }),
    engine: StringEnum(['mariadb'] as const),
    charset: Charset,
    collation: Type.String({ maxLength: 64 }),
    size_bytes: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      format: 'int64',
      description:
        "Data and indexes, measured on the server at each apply and every minute; counts against the account's `disk_quota_mb`.",
    }),
    status: StringEnum(['active', 'suspended'] as const, {
      description: '`suspended` while the account is: its users cannot log in.',
    }),
    ...DatabaseSync,
    ...ResourceMeta,
  },
  { $id: 'Database', description: 'A MariaDB database of an account.' },
);
const grantOfUser = Type.Object({ database_id: Id('db'), database: Type.String({ maxLength: 64 }), privileges: Privileges });
const userFields = {
  id: Id('dbu'),
  account_id: Id('acc'),
  username: Type.String({ maxLength: 80 }),
  status: UserStatus,
  grants: Type.Array(grantOfUser, {
    maxItems: 10_000,
    description: 'The databases the user may use, with its privileges on each.',
  }),
  ...DatabaseSync,
  ...ResourceMeta,
};
export const DatabaseUser = Type.Object(userFields, {
  $id: 'DatabaseUser',
  description: 'A MariaDB user of an account; it sees only the databases it is granted.',
});
export const DatabaseUserWithPassword = Type.Object(
  {
    ...userFields,
    password: Type.Optional(Type.String({ maxLength: 100, description: 'A generated password; in this response only.' })),
  },
  { $id: 'DatabaseUserWithPassword', description: 'A database user, with its generated password when one was asked for.' },
);
export const DatabaseGrant = Type.Object(
  {
    id: Id('dbu'),
    username: Type.String({ maxLength: 80 }),
    database_id: Id('db'),
    database: Type.String({ maxLength: 64 }),
    privileges: Privileges,
    ...ResourceMeta,
  },
  { $id: 'DatabaseGrant', description: "A user's privileges on one database; `id` is the user's." },
);

export const DatabaseListQuery = Type.Object(
  {
    ...PageQuery,
    account_id: Type.Optional(Id('acc')),
    q: Type.Optional(Type.String({ maxLength: 80, description: 'Substring of the name.' })),
  },
  { additionalProperties: false },
);
export const GrantParams = Type.Object({ database_id: Id('db'), user_id: Id('dbu') }, { additionalProperties: false });

export type Database = Static<typeof Database>;
export type DatabaseUser = Static<typeof DatabaseUser>;
export type DatabaseUserWithPassword = Static<typeof DatabaseUserWithPassword>;
export type DatabaseGrant = Static<typeof DatabaseGrant>;
export type DatabaseListQuery = Static<typeof DatabaseListQuery>;

export const CreateDatabase = Type.Object(
  {
    account_id: Id('acc'),
    name: Name('database', 32),
    charset: Type.Optional(Charset),
    collation: Type.Optional(Collation),
  },
  { additionalProperties: false },
);
export type CreateDatabase = Static<typeof CreateDatabase>;
export const DatabaseMutable = { charset: Charset, collation: Collation };
export type DatabasePatch = Partial<Static<ReturnType<typeof Type.Object<typeof DatabaseMutable>>>>;

export const CreateDatabaseUser = Type.Object(
  {
    account_id: Id('acc'),
    username: Name('user', 47),
    password: Type.Optional(Password),
    generate_password: Type.Optional(GeneratePassword),
  },
  { additionalProperties: false },
);
export type CreateDatabaseUser = Static<typeof CreateDatabaseUser>;
export const UserMutable = { status: UserStatus };
export const UserWriteOnly = { password: Password, generate_password: GeneratePassword };
export type UserPatch = Partial<Static<ReturnType<typeof Type.Object<typeof UserMutable & typeof UserWriteOnly>>>>;

export const PutGrant = Type.Object({ privileges: Privileges }, { additionalProperties: false });

export const databaseSchemas = [Database, DatabaseUser, DatabaseUserWithPassword, DatabaseGrant];
