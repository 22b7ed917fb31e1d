-- Moves: an account's roles carried from one server to another (docs/Guides/servers.md). Each
-- move records its steps, so that a move resumes after any process is killed. The account row carries the
-- move that holds it (move_id: the lock; a second move, a deployment, a backup or a restore of a
-- moving account is refused) and whether its servers serve it frozen (frozen_at).

CREATE TABLE moves (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  reseller_id text,
  operation_id text NOT NULL,
  -- {"web": "srv_…", …}: the roles that move, from where and to where.
  from_servers jsonb NOT NULL,
  to_servers jsonb NOT NULL,
  cutover text NOT NULL CHECK (cutover IN ('auto', 'manual')),
  -- The backup the move copies from instead of the source (an unreachable source).
  from_backup text,
  -- The server whose drain started the move (a drain retries an account's failed move a few times).
  drain_of text,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN
    ('queued', 'copying', 'ready', 'freezing', 'cutting_over', 'forwarding', 'completed', 'failed', 'canceled')),
  -- [{"name": "check", "state": "pending|running|done|failed|skipped", "started_at", "ended_at"}]
  steps jsonb NOT NULL,
  -- The records whose TTL was lowered, with the TTL each had: {"<record id>": 3600}.
  lowered_ttls jsonb NOT NULL DEFAULT '{}',
  cancel_requested boolean NOT NULL DEFAULT false,
  cutover_requested boolean NOT NULL DEFAULT false,
  bytes_total bigint NOT NULL DEFAULT 0,
  bytes_copied bigint NOT NULL DEFAULT 0,
  error jsonb,
  frozen_at timestamptz,
  cut_over_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);
CREATE INDEX moves_account_idx ON moves (account_id, id);
CREATE INDEX moves_status_idx ON moves (status, id);

ALTER TABLE accounts
  ADD COLUMN move_id text,
  ADD COLUMN frozen_at timestamptz;

-- A drained server: it held no account any more when its drain ended (status `decommissioned`).
ALTER TABLE servers ADD COLUMN decommissioned_at timestamptz;
