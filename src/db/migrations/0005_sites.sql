-- Sites and their deployments. A site row is also its web apply unit (server block + live
-- release). Every hostname a site answers to (its hostname and aliases) is a row of
-- site_hostnames, so a name serves one site in the whole service (a constraint, not a lookup).

CREATE TABLE sites (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  hostname text NOT NULL,
  aliases text[] NOT NULL DEFAULT '{}',
  runtime text NOT NULL DEFAULT 'static' CHECK (runtime IN ('static')),
  status text NOT NULL DEFAULT 'provisioning'
    CHECK (status IN ('provisioning', 'active', 'suspended', 'failed', 'deleting')),
  suspension_reason text,
  current_deployment_id text,
  error jsonb,
  generation integer NOT NULL DEFAULT 1,
  applied_generation integer NOT NULL DEFAULT 0,
  sync_state text NOT NULL DEFAULT 'pending' CHECK (sync_state IN ('pending', 'in_sync', 'error')),
  sync_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);
CREATE INDEX sites_account_idx ON sites (account_id, id);

CREATE TABLE site_hostnames (
  hostname text PRIMARY KEY,
  site_id text NOT NULL REFERENCES sites (id) ON DELETE CASCADE
);
CREATE INDEX site_hostnames_site_idx ON site_hostnames (site_id);

CREATE TABLE deployments (
  id text PRIMARY KEY,
  site_id text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  -- pending → live | failed; a live release becomes superseded when another goes live (kept
  -- for rollback) and pruned when its files are removed.
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'live', 'failed', 'superseded', 'pruned')),
  format text NOT NULL CHECK (format IN ('tar.gz', 'zip')),
  size_bytes bigint NOT NULL DEFAULT 0,
  file_count integer NOT NULL DEFAULT 0,
  error jsonb,
  live_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);
CREATE INDEX deployments_site_idx ON deployments (site_id, id);
