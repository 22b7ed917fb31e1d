import { Type, type Static } from 'typebox';
import { Id, Name, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';

/** Hosting servers as the API shows and takes them: each shape declared once. */

export const ROLES = ['web', 'mail', 'database'] as const;
export const Role = StringEnum(ROLES);
export type Role = Static<typeof Role>;
export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);
const Roles = Type.Array(Role, {
  minItems: 1,
  maxItems: 3,
  uniqueItems: true,
  description: 'What the server hosts: accounts are placed on it for these roles only.',
});
const Ipv4 = Nullable(Type.String({ format: 'ipv4', maxLength: 15 }));
const Ipv6 = Nullable(Type.String({ format: 'ipv6', maxLength: 45 }));
const Capacity = Type.Object(
  {
    accounts: Type.Integer({
      minimum: 0,
      maximum: 1_000_000,
      format: 'int32',
      description: 'Accounts the server may hold; placement skips it once full.',
    }),
    disk_bytes: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 0,
          maximum: Number.MAX_SAFE_INTEGER,
          format: 'int64',
          description:
            "Bytes used on the server's disk (`usage.disk_bytes`) from which placement skips it and a move to it is refused (422 `server_full`); null: not limited.",
        }),
      ),
    ),
  },
  { additionalProperties: false },
);
const Placement = StringEnum(['enabled', 'disabled'] as const, {
  description: '`disabled`: the server keeps its accounts but no new one is placed on it.',
});
const Status = StringEnum(['pending_enrolment', 'online', 'unreachable', 'draining', 'decommissioned'] as const, {
  description:
    '`pending_enrolment` until its agent enrols; `online` while the agent polls; `unreachable` after three missed waits; `draining` while its accounts move away (`POST /v1/servers/{server_id}/drain`); `decommissioned` once its drain moved the last one: it can be deleted.',
});
export type ServerStatus = Static<typeof Status>;
const Count = Type.Integer({ minimum: 0, maximum: 2_000_000_000, format: 'int32' });

const UnitCounts = Type.Object(
  {
    in_sync: Count,
    pending: Count,
    error: Count,
    oldest_pending_at: Nullable(Timestamp),
  },
  { description: 'The apply units of the accounts placed on the server (sites, mail domains, database accounts).' },
);

export const Server = Type.Object(
  {
    id: Id('srv'),
    name: Name,
    roles: Roles,
    ipv4: Ipv4,
    ipv6: Ipv6,
    capacity: Capacity,
    placement: Placement,
    status: Status,
    local: Type.Boolean({ description: 'The installation’s own machine, applied in-process (no agent).' }),
    last_seen_at: Nullable(Timestamp),
    agent_version: Nullable(Type.String({ maxLength: 100 })),
    timezone: Nullable(
      Type.String({
        maxLength: 64,
        description: "The time zone the server runs in (its cron's), as its agent reports it; null until it has.",
      }),
    ),
    usage: Type.Object({
      accounts: Count,
      disk_bytes: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' }),
    }),
    units: UnitCounts,
    ...ResourceMeta,
  },
  {
    $id: 'Server',
    description:
      'A hosting server: accounts are placed on it for its roles, and its agent applies their units. `local` is the installation’s own machine.',
  },
);
export type Server = Static<typeof Server>;

export const Enrolment = Type.Object(
  {
    token: Type.String({ maxLength: 100, description: 'One use, valid for one hour; shown once.' }),
    expires_at: Timestamp,
    command: Type.String({
      maxLength: 2000,
      description: 'The command to run on the server: it names the control plane’s agent CA fingerprint.',
    }),
  },
  { $id: 'Enrolment' },
);
export type Enrolment = Static<typeof Enrolment>;

const ServerWithEnrolment = Type.Object(
  { ...Server.properties, enrolment: Type.Ref('Enrolment') },
  { $id: 'ServerWithEnrolment', description: 'A new server with its enrolment (the token is shown only here).' },
);
export type ServerWithEnrolment = Server & { enrolment: Enrolment };

export const ServerMutable = { name: Name, roles: Roles, ipv4: Ipv4, ipv6: Ipv6, capacity: Capacity, placement: Placement };
export type ServerFields = Static<ReturnType<typeof Type.Object<typeof ServerMutable>>>;

export const CreateServer = Type.Object(
  {
    name: Name,
    roles: Roles,
    ipv4: Type.String({ format: 'ipv4', maxLength: 15 }),
    ipv6: Type.Optional(Ipv6),
    capacity: Capacity,
    placement: Type.Optional(Placement),
  },
  { additionalProperties: false },
);
export type CreateServer = Static<typeof CreateServer>;

export const ServerListQuery = Type.Object(
  {
    ...PageQuery,
    role: Type.Optional(StringEnum(ROLES, { description: 'Only servers with this role.' })),
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
);
export type ServerListQuery = Static<typeof ServerListQuery>;

export const serverSchemas = [Server, Enrolment, ServerWithEnrolment];
