-- A moved account's share of the server it left, forwarded to its new servers while the records
-- that named the old one may still be cached: its sites proxied to `web`, its mail relayed to
-- `mail` (the new servers' addresses). Handed to the old server's agent until it reports it
-- applied; the account's withdrawal from that server ends it.
CREATE TABLE agent_forwards (
  server_id text NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  account_id text NOT NULL,
  web text,
  mail text,
  applied boolean NOT NULL DEFAULT false,
  PRIMARY KEY (server_id, account_id)
);

-- A move's source forwards until forward_until (the lowered TTL after the cutover, and the old
-- TTLs after the lowering, have passed); its step `forward` comes between `thaw` and `cleanup`.
ALTER TABLE moves ADD COLUMN forward_until timestamptz;
UPDATE moves SET steps = jsonb_insert(steps, '{7}', jsonb_build_object('name', 'forward',
    'state', CASE WHEN status IN ('completed', 'failed', 'canceled') THEN 'skipped' ELSE 'pending' END,
    'started_at', NULL, 'ended_at', NULL))
  WHERE jsonb_array_length(steps) = 9;

-- A move lowers the records naming the server it leaves to BERTH_MOVE_TTL_S, at least 5 s; a
-- record written through the API still has at least 60 (its validation).
ALTER TABLE dns_records DROP CONSTRAINT dns_records_ttl_check;
ALTER TABLE dns_records ADD CONSTRAINT dns_records_ttl_check CHECK (ttl BETWEEN 5 AND 86400);
