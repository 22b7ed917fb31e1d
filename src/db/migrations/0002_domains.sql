-- Domains and their DNS zones. A domain row is also the zone's apply unit: `generation` is
-- bumped by every change and `applied_generation` records what the DNS driver has applied.

CREATE TABLE domains (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (name ~ '^[a-z0-9.-]{3,253}$'),
  unicode_name text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  mail_enabled boolean NOT NULL DEFAULT false,
  serial bigint NOT NULL CHECK (serial > 0 AND serial < 4294967296),
  generation integer NOT NULL DEFAULT 1,
  applied_generation integer NOT NULL DEFAULT 0,
  sync_state text NOT NULL DEFAULT 'pending' CHECK (sync_state IN ('pending', 'in_sync', 'error')),
  sync_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  -- A domain exists once in the whole service.
  CONSTRAINT domains_name_key UNIQUE (name)
);
CREATE INDEX domains_account_idx ON domains (account_id, id);

CREATE TABLE dns_records (
  id text PRIMARY KEY,
  domain_id text NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
  name text NOT NULL,
  type text NOT NULL CHECK (type IN ('SOA', 'A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SRV', 'CAA')),
  ttl integer NOT NULL CHECK (ttl BETWEEN 60 AND 86400),
  content text NOT NULL,
  managed boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  -- A set never holds the same record twice.
  CONSTRAINT dns_records_unique_key UNIQUE (domain_id, name, type, content)
);
CREATE INDEX dns_records_domain_idx ON dns_records (domain_id, name, type);
