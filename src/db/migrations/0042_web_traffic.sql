-- The bytes each site sent per UTC day, as counted from the access logs of the web server that
-- served it (a site moved between servers has a row from each): the account's `bandwidth_bytes`.
-- Kept with the account, not the site, so a deleted site's traffic still counts for its month.
CREATE TABLE web_traffic (
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  site_id text NOT NULL,
  server_id text NOT NULL,
  day date NOT NULL,
  bytes bigint NOT NULL CHECK (bytes >= 0),
  PRIMARY KEY (account_id, site_id, server_id, day)
);
