import { Type, type Static } from 'typebox';
import { Failure, Id, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';

/** Moves as the API shows and takes them: each shape declared once (validator, type, document). */

const MOVE_STATUSES = [
  'queued',
  'copying',
  'ready',
  'freezing',
  'cutting_over',
  'forwarding',
  'completed',
  'failed',
  'canceled',
] as const;
const Status = StringEnum(MOVE_STATUSES, {
  description:
    '`queued` → `copying` (target checked, TTLs lowered, the account copied while the source serves it) → `ready` (a `manual` move waits here for its cutover) → `freezing` (the account is frozen and what changed since the copy copied) → `cutting_over` (placed on the target, its records pointed there, its data put there) → `forwarding` (served by the target; the source proxies its sites and relays its mail there until `forward_until`, for whoever still has the old records cached) → `completed` (the source cleaned up, TTLs restored). `failed` and `canceled` before the cutover leave the account where it was, as it was.',
});

/** The steps, in order; each is recorded as it runs and safe to run again after a crash. */
export const MOVE_STEPS = [
  'check',
  'lower_ttl',
  'copy',
  'freeze',
  'final_copy',
  'cutover',
  'land',
  'thaw',
  'forward',
  'cleanup',
  'restore_ttl',
] as const;
export type MoveStepName = (typeof MOVE_STEPS)[number];

const Step = Type.Object({
  name: StringEnum(MOVE_STEPS, {
    description:
      '`check`: the target servers are online, have the role and room; `lower_ttl`: the records pointing at the source get `BERTH_MOVE_TTL_S`; `copy`: files and maildirs are copied from the source through the control plane while it serves the account, and the sites’ files and the maildirs sent on to their new servers; `freeze`: the source serves the account frozen (503, logins refused); `final_copy`: what changed since the copy is copied (names new or with another size or modification time; names gone removed), the database dumps made with each table’s `CHECKSUM TABLE`, the copy verified against the source and what changed sent on to the target (a move from a backup unpacks the backup here); `cutover`: placement moves to the target, and the sites’ copies sent there go live; `land`: the rest of the copy is put on the target (the maildirs sent ahead moved into place there; the dumps loaded, and each table’s checksum there compared with the frozen source’s: one that differs fails the step, which runs again) and the records point there (an AAAA or A record of a family the target has no address of is deleted; the template’s names get one of a family the target has and the source had none of); `thaw`: once the target applies what was landed, the account is served again, by the target; `forward`: the source proxies the account’s sites and relays its mail to the target until `forward_until` (skipped for a move from a backup); `cleanup`: the source holds nothing of it any more; `restore_ttl`: the records get their TTLs back.',
  }),
  state: StringEnum(['pending', 'running', 'done', 'failed', 'skipped'] as const),
  started_at: Nullable({
    ...Timestamp,
    description: 'When the step first started: a step that runs again (after a restart, or a retry past the cutover) keeps it.',
  }),
  ended_at: Nullable(Timestamp),
});
export type MoveStep = Static<typeof Step>;

const Servers = Type.Object(
  {
    web: Type.Optional(Id('srv')),
    mail: Type.Optional(Id('srv')),
    database: Type.Optional(Id('srv')),
  },
  { additionalProperties: false },
);
const Bytes = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' });

export const Move = Type.Object(
  {
    id: Id('mov'),
    account_id: Id('acc'),
    from: { ...Servers, description: 'The servers the moved roles leave.' },
    to: { ...Servers, description: 'The servers the moved roles go to.' },
    cutover: StringEnum(['auto', 'manual'] as const),
    from_backup: Nullable(Id('bak', 'The backup the move copies from instead of the source.')),
    status: Status,
    steps: Type.Array(Step, { maxItems: MOVE_STEPS.length }),
    bytes_total: {
      ...Bytes,
      description: 'While the copy runs, the account’s disk use as last measured; once it is done, what was copied.',
    },
    bytes_copied: { ...Bytes, description: 'What has arrived so far (looked at every second while the copy runs).' },
    error: Nullable({
      ...Failure,
      description:
        'Why the move failed before its cutover and rolled back (`move_failed`), or why a step failed after it (`move_retrying`): the move is then tried again, after a tenth of the time since the cutover (at least `BERTH_JOB_RETRY_S`, at most five minutes), until it completes.',
    }),
    frozen_at: Nullable(Timestamp),
    cut_over_at: Nullable(Timestamp),
    forward_until: Nullable({
      ...Timestamp,
      description:
        'Until when the source forwards to the target: `BERTH_MOVE_TTL_S` after the cutover, and the longest TTL the records had after their lowering, whichever is later (a resolver may hold the old address that long).',
    }),
    completed_at: Nullable(Timestamp),
    ...ResourceMeta,
  },
  {
    $id: 'Move',
    description:
      "An account's roles carried to other servers. Exactly one server is in charge of a role at every moment: the source until `cut_over_at`, the target from then on. A move holds its account: deployments, backups, restores, its termination and another move answer 409 `account_moving` until it has ended.",
  },
);
export type Move = Static<typeof Move>;
const MoveWithOperation = Type.Object({ ...Move.properties, operation: Type.Ref('Operation') }, { $id: 'MoveWithOperation' });

export const CreateMove = Type.Object(
  {
    to: {
      ...Servers,
      minProperties: 1,
      description:
        'The target server of each role that moves (at least one); a role not named stays where it is. A target must be enrolled and online, have the role and room for one more account.',
    },
    from_backup: Type.Optional(
      Id(
        'bak',
        'When the source is unreachable: a completed backup of the account to copy from instead. What changed on the source since that backup is lost (the caller accepts it); the source is not waited for to freeze, and is withdrawn once its agent is back.',
      ),
    ),
    cutover: Type.Optional(
      StringEnum(['auto', 'manual'] as const, {
        description:
          '`auto` (default): cut over as soon as the target is ready. `manual`: wait in `ready` until `POST /v1/moves/{move_id}/cutover`.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateMove = Static<typeof CreateMove>;

export const MoveListQuery = Type.Object(
  { ...PageQuery, account_id: Type.Optional(Id('acc')), status: Type.Optional(Status) },
  { additionalProperties: false },
);
export type MoveListQuery = Static<typeof MoveListQuery>;

export const moveSchemas = [Move, MoveWithOperation];
