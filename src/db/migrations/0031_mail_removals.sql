-- A deleted mail domain on another server: its unit row went with the domain, so its agent is
-- handed this instead (the domain's maps and maildirs to take away) until it reports it done.
CREATE TABLE mail_removals (
  domain_id text PRIMARY KEY,
  server_id text NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  account_id text NOT NULL,
  name text NOT NULL
);
CREATE INDEX mail_removals_server_idx ON mail_removals (server_id);
