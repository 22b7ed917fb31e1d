-- Cron jobs: scheduled commands run as the account's Unix user by the cron of its web server.
-- An account's jobs form one apply unit (one file under /etc/cron.d), whose generation lives in
-- cron_units; runs are recorded by Berth's runner and collected here, the newest 100 per job.

ALTER TABLE plans
  ADD COLUMN max_cron_jobs integer NOT NULL DEFAULT 10 CHECK (max_cron_jobs >= 0),
  ADD COLUMN cron_min_interval_minutes integer NOT NULL DEFAULT 5 CHECK (cron_min_interval_minutes BETWEEN 1 AND 1440);

CREATE TABLE cron_units (
  account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  generation integer NOT NULL DEFAULT 1,
  applied_generation integer NOT NULL DEFAULT 0,
  sync_state text NOT NULL DEFAULT 'pending' CHECK (sync_state IN ('pending', 'in_sync', 'error')),
  sync_error text,
  pending_since timestamptz
);
CREATE TRIGGER cron_units_pending_since BEFORE INSERT OR UPDATE OF sync_state ON cron_units
  FOR EACH ROW EXECUTE FUNCTION note_pending_since();

CREATE TABLE cron_jobs (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL,
  schedule text NOT NULL,
  -- {"argv": [...]} or {"shell": "..."}: handed to the runner, never written into a cron line.
  command jsonb NOT NULL,
  timeout_s integer NOT NULL CHECK (timeout_s BETWEEN 1 AND 86400),
  overlap text NOT NULL CHECK (overlap IN ('skip', 'allow')),
  enabled boolean NOT NULL,
  notify jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);
CREATE INDEX cron_jobs_account_idx ON cron_jobs (account_id, id);

CREATE TABLE cron_runs (
  id text PRIMARY KEY,
  job_id text NOT NULL REFERENCES cron_jobs (id) ON DELETE CASCADE,
  trigger text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
  status text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'timed_out', 'skipped')),
  started_at timestamptz NOT NULL,
  finished_at timestamptz,
  exit_code integer,
  output_tail text NOT NULL DEFAULT '',
  reason text
);
CREATE INDEX cron_runs_job_idx ON cron_runs (job_id, started_at DESC, id DESC);

-- The time zone a server's agent runs in (its cron's), as its polls report it.
ALTER TABLE servers ADD COLUMN timezone text;
