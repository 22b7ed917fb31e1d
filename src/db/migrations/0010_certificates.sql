-- HTTPS for sites. What the owner asks for lives on the site (mode, redirect, HSTS);
-- the certificate Berth serves and the state of obtaining it live in certificates, one row per
-- site while its mode is not `none`.
ALTER TABLE sites
  ADD COLUMN tls_mode text NOT NULL DEFAULT 'none' CHECK (tls_mode IN ('auto', 'custom', 'none')),
  ADD COLUMN tls_redirect_http boolean NOT NULL DEFAULT false,
  ADD COLUMN tls_hsts boolean NOT NULL DEFAULT false;

CREATE TABLE certificates (
  site_id text PRIMARY KEY REFERENCES sites (id) ON DELETE CASCADE,
  -- pending: being obtained (an older certificate may still be served); active: served;
  -- failed: the last attempt failed and no certificate covers the site.
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'active', 'failed')),
  issuer text CHECK (issuer IN ('acme', 'internal', 'custom')),
  names text[] NOT NULL DEFAULT '{}',
  serial text,
  not_before timestamptz,
  not_after timestamptz,
  renew_after timestamptz,
  fingerprint_sha256 text,
  certificate_pem text,
  chain_pem text NOT NULL DEFAULT '',
  -- AES-GCM under a subkey of the server key (lib/sealed.ts); never stored in the clear.
  private_key_sealed text,
  -- The last failure (a problem object), kept while an older certificate is still served.
  error jsonb,
  -- Failures in a row, and when the next automatic attempt may start (backoff).
  failures integer NOT NULL DEFAULT 0,
  retry_at timestamptz,
  -- site.certificate.expiring is sent once per certificate.
  expiring_notified boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- The renewal scan: certificates due for renewal or a retry.
CREATE INDEX certificates_renew_idx ON certificates (renew_after);
CREATE INDEX certificates_retry_idx ON certificates (retry_at) WHERE retry_at IS NOT NULL;

-- Berth's own certificate authority (the `internal` issuer), shared by every process of a database.
CREATE TABLE certificate_authorities (
  name text PRIMARY KEY,
  certificate_pem text NOT NULL,
  private_key_sealed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One ACME account per directory (provider), its key sealed.
CREATE TABLE acme_accounts (
  directory_url text PRIMARY KEY,
  private_key_sealed text NOT NULL,
  account_url text,
  created_at timestamptz NOT NULL DEFAULT now()
);
