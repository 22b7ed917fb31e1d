-- Certificates of the provider's own hosts (the mail host, whose name submission
-- clients check under STARTTLS), obtained from the configured issuer like the sites' and renewed
-- the same way. One row per host name.
CREATE TABLE host_certificates (
  name text PRIMARY KEY,
  issuer text CHECK (issuer IN ('acme', 'internal')),
  serial text,
  not_before timestamptz,
  not_after timestamptz,
  renew_after timestamptz,
  fingerprint_sha256 text,
  certificate_pem text,
  chain_pem text NOT NULL DEFAULT '',
  -- AES-GCM under the TLS subkey of the server key (lib/sealed.ts), like the sites' keys.
  private_key_sealed text,
  -- The last failure (a problem object), kept while an older certificate is still served.
  error jsonb,
  failures integer NOT NULL DEFAULT 0,
  -- While set and ahead: claimed by an attempt in progress, or backing off after a failure.
  retry_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
