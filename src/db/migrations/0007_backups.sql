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
