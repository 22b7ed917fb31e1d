-- Foundation: resellers, plans, accounts, tokens, operations, events, idempotency, rate limits.
-- Every resource row has id (TypeID text), created_at, updated_at and version (bumped per change).

CREATE TABLE resellers (
  id text PRIMARY KEY CHECK (id ~ '^rsl_[0-7][0-9a-hjkmnp-tv-z]{25}$'),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  contact_email text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  max_accounts integer CHECK (max_accounts >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);

CREATE TABLE plans (
  id text PRIMARY KEY,
  reseller_id text REFERENCES resellers (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  description text NOT NULL DEFAULT '',
  max_sites integer NOT NULL CHECK (max_sites >= 0),
  max_domains integer NOT NULL CHECK (max_domains >= 0),
  max_email_accounts integer NOT NULL CHECK (max_email_accounts >= 0),
  max_email_quota_mb integer NOT NULL CHECK (max_email_quota_mb >= 0),
  disk_quota_mb integer NOT NULL CHECK (disk_quota_mb >= 0),
  max_backups integer NOT NULL CHECK (max_backups >= 0),
  max_dns_records_per_domain integer NOT NULL CHECK (max_dns_records_per_domain >= 0),
  features text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);
-- A plan name is unique among the global plans and among each reseller's own.
CREATE UNIQUE INDEX plans_owner_name_key ON plans (coalesce(reseller_id, ''), lower(name));

CREATE TABLE accounts (
  id text PRIMARY KEY,
  username text NOT NULL CHECK (username ~ '^[a-z][a-z0-9]{2,31}$'),
  display_name text NOT NULL,
  contact_email text NOT NULL,
  plan_id text NOT NULL REFERENCES plans (id) ON DELETE RESTRICT,
  reseller_id text REFERENCES resellers (id) ON DELETE RESTRICT,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'terminating')),
  suspension_reason text,
  suspended_at timestamptz,
  limit_overrides jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  CONSTRAINT accounts_username_key UNIQUE (username)
);
CREATE INDEX accounts_reseller_idx ON accounts (reseller_id, id);

CREATE TABLE tokens (
  id text PRIMARY KEY,
  name text NOT NULL,
  principal_kind text NOT NULL CHECK (principal_kind IN ('operator', 'reseller', 'account')),
  reseller_id text REFERENCES resellers (id) ON DELETE CASCADE,
  account_id text REFERENCES accounts (id) ON DELETE CASCADE,
  scopes text[] NOT NULL,
  account_ids text[],
  expires_at timestamptz,
  allowed_ips text[] NOT NULL DEFAULT '{}',
  last_used_at timestamptz,
  prefix text NOT NULL,
  secret_hash text NOT NULL,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  CONSTRAINT tokens_secret_hash_key UNIQUE (secret_hash),
  -- The principal columns agree with the kind: an account token names its account only, etc.
  CONSTRAINT tokens_principal_check CHECK (
    (principal_kind = 'operator' AND reseller_id IS NULL AND account_id IS NULL)
    OR (principal_kind = 'reseller' AND reseller_id IS NOT NULL AND account_id IS NULL)
    OR (principal_kind = 'account' AND account_id IS NOT NULL)
  )
);

-- reseller_id is copied from the account (immutable) so reach survives the account's deletion.
CREATE TABLE operations (
  id text PRIMARY KEY,
  type text NOT NULL,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
  progress integer NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
  resource_type text NOT NULL,
  resource_id text NOT NULL,
  account_id text,
  reseller_id text,
  error jsonb,
  started_at timestamptz,
  finished_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);
CREATE INDEX operations_account_idx ON operations (account_id, id);
CREATE INDEX operations_resource_idx ON operations (resource_id, id);
-- At most one unfinished operation of a type per resource: repeated DELETEs share one.
CREATE UNIQUE INDEX operations_one_active_key ON operations (resource_id, type)
  WHERE status IN ('queued', 'running');

CREATE TABLE events (
  id text PRIMARY KEY,
  type text NOT NULL,
  account_id text,
  reseller_id text,
  resource_type text NOT NULL,
  resource_id text NOT NULL,
  resource_version integer NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_account_idx ON events (account_id, id);
CREATE INDEX events_resource_idx ON events (resource_id, id);
CREATE INDEX events_created_idx ON events (created_at);

CREATE TABLE idempotency_keys (
  principal text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  state text NOT NULL CHECK (state IN ('running', 'done')),
  status_code integer,
  headers jsonb,
  body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (principal, key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

CREATE TABLE rate_buckets (
  key text PRIMARY KEY,
  tokens double precision NOT NULL,
  allowed boolean NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
