-- A server's `usage.accounts` and `units` counts, kept as accounts and units change instead of
-- counted when a server is read: at a million domains a page of servers counted half a million
-- units, and every account for each server listed (bench:scale).
--
-- Each statement that adds, changes or removes units adds one row per server it touched, the
-- difference it made, as each account placed, moved or removed does; the hourly housekeeping
-- folds each server's rows into one. Rows are only ever added, so applies on one server never
-- wait for each other on a counter.
CREATE TABLE server_counts (
  server_id text NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  accounts integer NOT NULL DEFAULT 0,
  in_sync integer NOT NULL DEFAULT 0,
  pending integer NOT NULL DEFAULT 0,
  error integer NOT NULL DEFAULT 0
);
CREATE INDEX server_counts_server_idx ON server_counts (server_id);

-- An account counts once on each server it is placed on, whatever roles it has there.
CREATE FUNCTION count_server_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO server_counts (server_id, accounts)
  SELECT server_id, sum(sign) FROM (
    SELECT DISTINCT -1, unnest(ARRAY[OLD.web_server_id, OLD.mail_server_id, OLD.database_server_id]) WHERE TG_OP <> 'INSERT'
    UNION ALL
    SELECT DISTINCT 1, unnest(ARRAY[NEW.web_server_id, NEW.mail_server_id, NEW.database_server_id]) WHERE TG_OP <> 'DELETE'
  ) d (sign, server_id) GROUP BY server_id HAVING sum(sign) <> 0;
  RETURN NULL;
END $$;
CREATE TRIGGER accounts_counted AFTER INSERT OR DELETE OR UPDATE OF web_server_id, mail_server_id, database_server_id
  ON accounts FOR EACH ROW EXECUTE FUNCTION count_server_accounts();
INSERT INTO server_counts (server_id, accounts)
  SELECT s.server_id, count(DISTINCT a.id) FROM accounts a
  CROSS JOIN LATERAL (VALUES (a.web_server_id), (a.mail_server_id), (a.database_server_id)) s (server_id)
  GROUP BY s.server_id;

-- The statement that adds the differences `units` (rows `u` with a `sign` and a `sync_state`)
-- make, per server: `placed` joins a row to its account `a`, whose column `server` places it.
-- Units whose account is gone (a deletion's cascade) are left out: the deletion took them out of
-- the counts first. Run by the trigger itself: only its own statements see its transition tables.
CREATE FUNCTION server_unit_deltas_sql(units text, placed text, server text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT format(
    'INSERT INTO server_counts (server_id, in_sync, pending, error)
     SELECT server_id, in_sync, pending, error FROM (
       SELECT a.%3$I AS server_id,
         coalesce(sum(u.sign) FILTER (WHERE u.sync_state = ''in_sync''), 0) AS in_sync,
         coalesce(sum(u.sign) FILTER (WHERE u.sync_state = ''pending''), 0) AS pending,
         coalesce(sum(u.sign) FILTER (WHERE u.sync_state = ''error''), 0) AS error
       FROM (%1$s) u %2$s GROUP BY 1) d
     WHERE (in_sync, pending, error) <> (0, 0, 0)',
    units, placed, server)
$$;

-- A unit table's statement trigger; its arguments are `placed` and `server` above.
CREATE FUNCTION count_server_units() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE server_unit_deltas_sql(
    CASE TG_OP
      WHEN 'INSERT' THEN 'SELECT 1 AS sign, * FROM new_units'
      WHEN 'DELETE' THEN 'SELECT -1 AS sign, * FROM old_units'
      ELSE 'SELECT 1 AS sign, * FROM new_units UNION ALL SELECT -1, * FROM old_units'
    END,
    TG_ARGV[0], TG_ARGV[1]);
  RETURN NULL;
END $$;

-- An account's units follow it to the server it is placed on, and leave its server's counts
-- before the account goes (their cascade no longer finds it). They are locked first, so that an
-- apply being recorded is counted on the server it was made for before they move; a unit is only
-- added under the account's own lock (its plan's limit), which a placement waits for.
-- Arguments: the unit table, the condition naming the account's units (`%L` its id), and the
-- account's column that places them.
CREATE FUNCTION place_server_units() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  units text := format('%s u WHERE ' || TG_ARGV[1], TG_ARGV[0], OLD.id);
  was_on text := to_jsonb(OLD) ->> TG_ARGV[2];
  placed_on text := CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(NEW) ->> TG_ARGV[2] END;
BEGIN
  IF was_on IS DISTINCT FROM placed_on THEN
    EXECUTE format('SELECT 1 FROM %s FOR UPDATE OF u', units);
    EXECUTE server_unit_deltas_sql(format('SELECT -1 AS sign, u.sync_state FROM %s', units),
      format('CROSS JOIN (SELECT %L AS server_id) a', was_on), 'server_id');
    IF placed_on IS NOT NULL THEN
      EXECUTE server_unit_deltas_sql(format('SELECT 1 AS sign, u.sync_state FROM %s', units),
        format('CROSS JOIN (SELECT %L AS server_id) a', placed_on), 'server_id');
    END IF;
  END IF;
  RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END $$;

-- The same for a domain deleted on its own: its mail unit leaves its account's mail server.
CREATE FUNCTION drop_domain_mail_units() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM mail_units WHERE domain_id = OLD.id FOR UPDATE;
  EXECUTE server_unit_deltas_sql(format('SELECT -1 AS sign, sync_state FROM mail_units WHERE domain_id = %L', OLD.id),
    format('JOIN accounts a ON a.id = %L', OLD.account_id), 'mail_server_id');
  RETURN OLD;
END $$;

-- Each unit table: how a unit finds its account `a`, the account's column that places it, and
-- which of its units an account holds. Its triggers, its counts as they stand, and an index of
-- its units waiting to be applied (a server's `oldest_pending_at` reads those alone).
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT * FROM (VALUES
    ('sites', 'JOIN accounts a ON a.id = u.account_id', 'web_server_id', 'u.account_id = %L'),
    ('cron_units', 'JOIN accounts a ON a.id = u.account_id', 'web_server_id', 'u.account_id = %L'),
    ('ssh_units', 'JOIN accounts a ON a.id = u.account_id', 'web_server_id', 'u.account_id = %L'),
    ('database_units', 'JOIN accounts a ON a.id = u.account_id', 'database_server_id', 'u.account_id = %L'),
    ('mail_units', 'JOIN domains d ON d.id = u.domain_id JOIN accounts a ON a.id = d.account_id', 'mail_server_id',
      'u.domain_id IN (SELECT id FROM domains WHERE account_id = %L)')
  ) AS v (units, placed, server, of_account) LOOP
    -- A trigger with transition tables fires on one event only.
    EXECUTE format('CREATE TRIGGER %1$s_counted_insert AFTER INSERT ON %1$I REFERENCING NEW TABLE AS new_units
      FOR EACH STATEMENT EXECUTE FUNCTION count_server_units(%2$L, %3$L)', t.units, t.placed, t.server);
    EXECUTE format('CREATE TRIGGER %1$s_counted_update AFTER UPDATE ON %1$I REFERENCING OLD TABLE AS old_units NEW TABLE AS new_units
      FOR EACH STATEMENT EXECUTE FUNCTION count_server_units(%2$L, %3$L)', t.units, t.placed, t.server);
    EXECUTE format('CREATE TRIGGER %1$s_counted_delete AFTER DELETE ON %1$I REFERENCING OLD TABLE AS old_units
      FOR EACH STATEMENT EXECUTE FUNCTION count_server_units(%2$L, %3$L)', t.units, t.placed, t.server);
    EXECUTE format('CREATE TRIGGER %1$s_placed BEFORE UPDATE OF %2$I OR DELETE ON accounts
      FOR EACH ROW EXECUTE FUNCTION place_server_units(%1$L, %3$L, %2$L)', t.units, t.server, t.of_account);
    EXECUTE server_unit_deltas_sql(format('SELECT 1 AS sign, * FROM %I', t.units), t.placed, t.server);
    EXECUTE format('CREATE INDEX %1$s_pending_idx ON %1$I (pending_since) WHERE pending_since IS NOT NULL', t.units);
  END LOOP;
END $$;
CREATE TRIGGER mail_units_domain_gone BEFORE DELETE ON domains
  FOR EACH ROW EXECUTE FUNCTION drop_domain_mail_units();

