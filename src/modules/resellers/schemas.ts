import { Type, type Static } from 'typebox';
import { Email, Id, Name, Nullable, PageQuery, ResourceMeta, StringEnum } from '../../http/schemas.js';

/** Resellers as the API shows and takes them: each shape declared once (validator, type, document). */

const Status = StringEnum(['active', 'suspended'] as const);
const MaxAccounts = Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000, format: 'int32', description: 'null: unlimited' }));

export const Reseller = Type.Object(
  { id: Id('rsl'), name: Name, contact_email: Email, status: Status, max_accounts: MaxAccounts, ...ResourceMeta },
  { $id: 'Reseller', description: 'A reseller owns many hosting accounts. Suspending it makes all its accounts read-only.' },
);
export type Reseller = Static<typeof Reseller>;

export const ResellerMutable = { name: Name, contact_email: Email, status: Status, max_accounts: MaxAccounts };
export type ResellerFields = Static<ReturnType<typeof Type.Object<typeof ResellerMutable>>>;

export const CreateReseller = Type.Object(
  { name: Name, contact_email: Email, status: Type.Optional(Status), max_accounts: Type.Optional(MaxAccounts) },
  { additionalProperties: false },
);
export type CreateReseller = Static<typeof CreateReseller>;

export const ResellerListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(Status),
    q: Type.Optional(Type.String({ maxLength: 200, description: "Case-insensitive substring of the reseller's name." })),
  },
  { additionalProperties: false },
);
export type ResellerListQuery = Static<typeof ResellerListQuery>;

export const resellerSchemas = [Reseller];
