-- SSH and SFTP access: the account's own Unix user, reached with keys managed through the API.
-- An account's access mode and keys form one apply unit (its key file, its access group, its
-- chroot link on its web server), whose generation lives in ssh_units.

ALTER TABLE plans
  ADD COLUMN ssh_access text NOT NULL DEFAULT 'sftp' CHECK (ssh_access IN ('disabled', 'sftp', 'shell')),
  ADD COLUMN max_ssh_keys integer NOT NULL DEFAULT 10 CHECK (max_ssh_keys >= 0);

CREATE TABLE ssh_units (
  account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  access text NOT NULL DEFAULT 'disabled' CHECK (access IN ('disabled', 'sftp', 'shell')),
  generation integer NOT NULL DEFAULT 1,
  applied_generation integer NOT NULL DEFAULT 0,
  sync_state text NOT NULL DEFAULT 'pending' CHECK (sync_state IN ('pending', 'in_sync', 'error')),
  sync_error text,
  pending_since timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER ssh_units_pending_since BEFORE INSERT OR UPDATE OF sync_state ON ssh_units
  FOR EACH ROW EXECUTE FUNCTION note_pending_since();

CREATE TABLE ssh_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL,
  type text NOT NULL,
  bits integer NOT NULL,
  fingerprint_sha256 text NOT NULL,
  comment text,
  -- `type base64`, the comment left out: what the server's key file holds.
  public_key text NOT NULL,
  allowed_from text[] NOT NULL DEFAULT '{}',
  last_used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  CONSTRAINT ssh_keys_fingerprint_key UNIQUE (account_id, fingerprint_sha256)
);
-- The logins sshd reports name a key by its fingerprint alone.
CREATE INDEX ssh_keys_fingerprint_idx ON ssh_keys (fingerprint_sha256);
