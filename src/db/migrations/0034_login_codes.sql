-- A login link's single-use code (its SHA-256; the code itself is only in the link): exchanged
-- once, within 60 s, for a token of the account, narrowed to the link maker's token.
CREATE TABLE login_codes (
  code_hash text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  -- The token that made the link: the session's token is minted below it.
  created_by text NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_codes_expires_idx ON login_codes (expires_at);
