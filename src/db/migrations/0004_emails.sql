-- Mailboxes and forwarders. Both are addresses of a mail-enabled domain and share one table,
-- so that an address is unique across the service and across both kinds (a constraint, not a
-- lookup before the insert). A domain's mailboxes and forwarders form its mail apply unit,
-- whose generation lives on the domain row beside the zone's.

ALTER TABLE domains
  ADD COLUMN mail_generation integer NOT NULL DEFAULT 1,
  ADD COLUMN mail_applied_generation integer NOT NULL DEFAULT 0,
  ADD COLUMN mail_sync_state text NOT NULL DEFAULT 'pending' CHECK (mail_sync_state IN ('pending', 'in_sync', 'error')),
  ADD COLUMN mail_sync_error text;

CREATE TABLE mail_addresses (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('mailbox', 'forwarder')),
  domain_id text NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  address text NOT NULL CHECK (address = lower(address) AND length(address) <= 254),
  -- Mailboxes only: a Dovecot password scheme hash ({ARGON2ID}...), never the password.
  password_hash text,
  quota_mb integer CHECK (quota_mb > 0),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  -- Mailboxes: addresses that also receive a copy; forwarders: where mail goes.
  forward_to text[] NOT NULL DEFAULT '{}',
  autoresponder jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  CONSTRAINT mail_addresses_address_key UNIQUE (address),
  CONSTRAINT mail_addresses_shape_check CHECK (
    (kind = 'mailbox' AND password_hash IS NOT NULL AND quota_mb IS NOT NULL)
    OR (kind = 'forwarder' AND password_hash IS NULL AND quota_mb IS NULL AND cardinality(forward_to) > 0)
  )
);
CREATE INDEX mail_addresses_domain_idx ON mail_addresses (domain_id, id);
CREATE INDEX mail_addresses_account_idx ON mail_addresses (account_id, kind, id);
