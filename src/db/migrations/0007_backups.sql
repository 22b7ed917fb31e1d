-- Backups of an account: an archive on backup storage (sites' live releases, Maildirs, zone
-- files and a manifest of every resource), checksummed.

CREATE TABLE backups (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  trigger text NOT NULL DEFAULT 'manual' CHECK (trigger IN ('manual', 'schedule')),
  schedule_id text,
  include text[] NOT NULL,
  -- queued → running → completed | failed; completed → expired (retention removes the archive).
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed', 'expired')),
  size_bytes bigint,
  sha256 text,
  contents jsonb,
  storage_key text NOT NULL,
  -- Bumped by each run of the backup job; only the latest run may complete it (a run that pg-boss
  -- retried while the first was still going changes nothing once superseded).
  attempt integer NOT NULL DEFAULT 0,
  error jsonb,
  started_at timestamptz,
  completed_at timestamptz,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);
CREATE INDEX backups_account_idx ON backups (account_id, id);
-- One backup in progress per account: a second is a 409 from the constraint, not a lookup.
CREATE UNIQUE INDEX backups_one_running_key ON backups (account_id) WHERE status IN ('queued', 'running');

CREATE TABLE backup_schedules (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  cron text NOT NULL,
  timezone text NOT NULL,
  include text[] NOT NULL,
  retain integer NOT NULL CHECK (retain BETWEEN 1 AND 1000),
  enabled boolean NOT NULL DEFAULT true,
  -- The next slot; a run claims it by moving it on (conditional on its value): once per slot.
  next_run_at timestamptz,
  last_run_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);
CREATE INDEX backup_schedules_account_idx ON backup_schedules (account_id, id);
CREATE INDEX backup_schedules_due_idx ON backup_schedules (next_run_at) WHERE enabled;
CREATE INDEX backups_schedule_idx ON backups (schedule_id, completed_at) WHERE status = 'completed';
