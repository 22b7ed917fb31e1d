-- A signed zone (no row: unsigned). `status`: `signing` until the zone is served
-- signed, `pending_ds` until its DS is seen at the parent, `active`, `pending_disable` while the
-- CDS/CDNSKEY delete records ask the parent to remove the DS, `error` when the zone could not be
-- signed (`error` says why).
CREATE TABLE dnssec (
  domain_id text PRIMARY KEY REFERENCES domains (id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('signing', 'pending_ds', 'active', 'pending_disable', 'error')),
  algorithm smallint NOT NULL CHECK (algorithm IN (8, 13, 15)),
  denial text NOT NULL CHECK (denial IN ('nsec', 'nsec3')),
  publish_cds boolean NOT NULL,
  parent_ds_seen_at timestamptz,
  -- When the zone was last served signed: signed again before its signatures (30 days) have 7 left.
  signed_at timestamptz,
  error jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The zone's signing keys, kept by Berth (the private key sealed with the server key): both DNS
-- drivers sign with them, so the DS a registrar holds stays right across drivers, restores and moves.
CREATE TABLE dnssec_keys (
  id text PRIMARY KEY,
  domain_id text NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
  algorithm smallint NOT NULL,
  flags integer NOT NULL,
  public_key text NOT NULL,
  private_key_sealed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dnssec_keys_domain_id ON dnssec_keys (domain_id);
