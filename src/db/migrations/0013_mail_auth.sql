-- Mail that providers accept: a DKIM key per mail-enabled domain (its public part a
-- managed `<selector>._domainkey` TXT record), the retired one kept published for 7 days after a
-- rotation, and the domain's DMARC policy (a managed `_dmarc` TXT record).

ALTER TABLE domains
  ADD COLUMN dmarc_policy text NOT NULL DEFAULT 'none' CHECK (dmarc_policy IN ('none', 'quarantine', 'reject')),
  ADD COLUMN dmarc_rua text CHECK (length(dmarc_rua) <= 254);

CREATE TABLE dkim_keys (
  domain_id text NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
  selector text NOT NULL CHECK (selector ~ '^b[0-9]{12}[a-z]?$'),
  -- PKCS#8 PEM, sealed with the server key: never on disk outside the signer's key file (0600).
  private_key_sealed text NOT NULL,
  -- The SubjectPublicKeyInfo, base64: the `p=` of the DNS record.
  public_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Null: the key that signs. Set by a rotation; the record goes 7 days after.
  retired_at timestamptz,
  PRIMARY KEY (domain_id, selector)
);
-- One signing key per domain: a constraint, not a check before the insert.
CREATE UNIQUE INDEX dkim_keys_signing_key ON dkim_keys (domain_id) WHERE retired_at IS NULL;
CREATE INDEX dkim_keys_retired_idx ON dkim_keys (retired_at) WHERE retired_at IS NOT NULL;
