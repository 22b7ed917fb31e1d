-- Hosting servers: the control plane places each account's web, mail and database
-- work on one of them. The `local` server is this installation's own machine, applied
-- in-process; its addresses default to BERTH_WEB_IPV4/BERTH_WEB_IPV6 while its columns are NULL.

CREATE TABLE servers (
  id text PRIMARY KEY,
  name text NOT NULL,
  roles text[] NOT NULL CHECK (roles <@ ARRAY['web', 'mail', 'database']::text[] AND cardinality(roles) > 0),
  ipv4 text,
  ipv6 text,
  capacity_accounts integer NOT NULL CHECK (capacity_accounts >= 0),
  capacity_disk_bytes bigint CHECK (capacity_disk_bytes >= 0),
  placement text NOT NULL DEFAULT 'enabled' CHECK (placement IN ('enabled', 'disabled')),
  -- pending_enrolment until an agent enrols; `local` is applied in-process and always online.
  enrolled boolean NOT NULL DEFAULT false,
  draining boolean NOT NULL DEFAULT false,
  last_seen_at timestamptz,
  agent_version text,
  -- Bytes used on the file system of the server's data directory, as its agent last reported.
  disk_bytes_used bigint NOT NULL DEFAULT 0,
  -- The last status announced by an event (server.online, server.unreachable): a periodic check
  -- compares it with the status derived from last_seen_at.
  announced_status text,
  -- The one-use enrolment token, stored as its SHA-256 only; NULL once used.
  enrolment_token_hash text,
  enrolment_expires_at timestamptz,
  -- The agent's current client certificate; any other serial is refused (a new enrolment revokes).
  certificate_serial text,
  certificate_not_after timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  CONSTRAINT servers_name_key UNIQUE (name)
);
CREATE UNIQUE INDEX servers_enrolment_token_idx ON servers (enrolment_token_hash) WHERE enrolment_token_hash IS NOT NULL;

INSERT INTO servers (id, name, roles, capacity_accounts, enrolled)
VALUES ('srv_00000000000000000000000000', 'local', ARRAY['web', 'mail', 'database'], 1000000, true);

-- Placement: every account lives on the `local` server until it is placed elsewhere; a server
-- that still holds an account cannot be deleted (409 server_not_empty).
ALTER TABLE accounts
  ADD COLUMN web_server_id text NOT NULL DEFAULT 'srv_00000000000000000000000000' REFERENCES servers (id) ON DELETE RESTRICT,
  ADD COLUMN mail_server_id text NOT NULL DEFAULT 'srv_00000000000000000000000000' REFERENCES servers (id) ON DELETE RESTRICT,
  ADD COLUMN database_server_id text NOT NULL DEFAULT 'srv_00000000000000000000000000' REFERENCES servers (id) ON DELETE RESTRICT;
CREATE INDEX accounts_web_server_idx ON accounts (web_server_id);
CREATE INDEX accounts_mail_server_idx ON accounts (mail_server_id);
CREATE INDEX accounts_database_server_idx ON accounts (database_server_id);

-- A server shows how long its oldest unit has waited: each apply unit notes when it last became
-- pending (set by the trigger, so no statement that marks a unit pending can forget it).
CREATE FUNCTION note_pending_since() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.sync_state = 'in_sync' THEN
    NEW.pending_since := NULL;
  ELSIF NEW.pending_since IS NULL THEN
    NEW.pending_since := now();
  END IF;
  RETURN NEW;
END $$;

ALTER TABLE database_units ADD COLUMN pending_since timestamptz;
ALTER TABLE mail_units ADD COLUMN pending_since timestamptz;
ALTER TABLE sites ADD COLUMN pending_since timestamptz;
UPDATE database_units SET pending_since = now() WHERE sync_state <> 'in_sync';
UPDATE mail_units SET pending_since = now() WHERE sync_state <> 'in_sync';
UPDATE sites SET pending_since = now() WHERE sync_state <> 'in_sync';
CREATE TRIGGER database_units_pending_since BEFORE INSERT OR UPDATE OF sync_state ON database_units
  FOR EACH ROW EXECUTE FUNCTION note_pending_since();
CREATE TRIGGER mail_units_pending_since BEFORE INSERT OR UPDATE OF sync_state ON mail_units
  FOR EACH ROW EXECUTE FUNCTION note_pending_since();
CREATE TRIGGER sites_pending_since BEFORE INSERT OR UPDATE OF sync_state ON sites
  FOR EACH ROW EXECUTE FUNCTION note_pending_since();
