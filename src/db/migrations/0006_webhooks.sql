-- Webhook endpoints, their deliveries (the outbox: written in the transaction of the event) and
-- every delivery attempt.

-- An endpoint belongs to the principal that created it: the operator, a reseller or an account.
-- reseller_id is the reseller it receives events of (the owner, or the owning account's
-- reseller, copied for reach); account_ids narrows it like the token that created it.
CREATE TABLE webhooks (
  id text PRIMARY KEY,
  principal_kind text NOT NULL CHECK (principal_kind IN ('operator', 'reseller', 'account')),
  reseller_id text REFERENCES resellers (id) ON DELETE CASCADE,
  account_id text REFERENCES accounts (id) ON DELETE CASCADE,
  account_ids text[],
  url text NOT NULL CHECK (length(url) <= 2048),
  description text NOT NULL DEFAULT '',
  event_types text[] NOT NULL CHECK (cardinality(event_types) >= 1),
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text,
  -- Signing secrets, sealed with the server's key (never stored in the clear). The previous
  -- secret keeps signing until previous_secret_expires_at after a rotation.
  secret_sealed text NOT NULL,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  CONSTRAINT webhooks_principal_check CHECK (
    (principal_kind = 'operator' AND reseller_id IS NULL AND account_id IS NULL)
    OR (principal_kind = 'reseller' AND reseller_id IS NOT NULL AND account_id IS NULL)
    OR (principal_kind = 'account' AND account_id IS NOT NULL)
  )
);
CREATE INDEX webhooks_enabled_idx ON webhooks (principal_kind, reseller_id, account_id) WHERE enabled;
CREATE INDEX webhooks_account_idx ON webhooks (account_id, id);
CREATE INDEX webhooks_reseller_idx ON webhooks (reseller_id, id);

-- pending (next attempt at next_attempt_at, or at once when null) → sending (claimed by a
-- worker until lease_until; claim numbers each hand-over so a stale worker changes nothing)
-- → succeeded | failed, or back to pending for a retry.
CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id text NOT NULL,
  event_type text NOT NULL,
  payload text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'succeeded', 'failed')),
  -- false after a manual retry: its failure neither schedules more attempts nor disables the endpoint.
  automatic boolean NOT NULL DEFAULT true,
  attempt_count integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  claim integer NOT NULL DEFAULT 0,
  lease_until timestamptz,
  last_status_code integer,
  last_error text,
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  CONSTRAINT webhook_deliveries_event_key UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, id);
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (next_attempt_at NULLS FIRST, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_sending_idx ON webhook_deliveries (webhook_id, lease_until) WHERE status = 'sending';
CREATE INDEX webhook_deliveries_completed_idx ON webhook_deliveries (completed_at) WHERE completed_at IS NOT NULL;

CREATE TABLE webhook_attempts (
  delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  number integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  status_code integer,
  error text,
  response_excerpt text,
  next_attempt_at timestamptz,
  PRIMARY KEY (delivery_id, number)
);
