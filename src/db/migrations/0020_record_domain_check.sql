-- A record's domain is checked once per statement, not once per row. The foreign key ran one
-- lookup per inserted record (a query of its own each: 150 of the 240 ms that 10,000 records of
-- a sync took to insert on PGlite); this does the same for all of a statement's rows at once:
-- every new record's domain must exist, and is locked FOR KEY SHARE as the foreign key locks it,
-- so a concurrent delete of the domain waits for the inserting transaction to end and then
-- removes its records too (the cascade below). Berth's transactions are READ COMMITTED: the
-- cascade's DELETE sees what committed before it.
ALTER TABLE dns_records DROP CONSTRAINT dns_records_domain_id_fkey;

-- One function for both triggers: a statement's new records at once after an INSERT, a record
-- row by row after an UPDATE that moves it (Berth's never do; updates that leave domain_id alone
-- never call it).
CREATE FUNCTION dns_records_domain_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing boolean;
BEGIN
  IF TG_LEVEL = 'ROW' THEN
    PERFORM 1 FROM domains WHERE id = NEW.domain_id FOR KEY SHARE;
    missing := NOT FOUND;
  ELSE
    PERFORM 1 FROM domains WHERE id IN (SELECT domain_id FROM new_records) FOR KEY SHARE;
    missing := EXISTS (SELECT 1 FROM new_records r WHERE NOT EXISTS (SELECT 1 FROM domains d WHERE d.id = r.domain_id));
  END IF;
  IF missing THEN
    RAISE EXCEPTION 'a DNS record must belong to an existing domain'
      USING ERRCODE = 'foreign_key_violation', TABLE = 'dns_records', CONSTRAINT = 'dns_records_domain_id_fkey';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER dns_records_domain_on_insert AFTER INSERT ON dns_records
  REFERENCING NEW TABLE AS new_records FOR EACH STATEMENT EXECUTE FUNCTION dns_records_domain_check();
CREATE TRIGGER dns_records_domain_on_update AFTER UPDATE OF domain_id ON dns_records
  FOR EACH ROW WHEN (NEW.domain_id IS DISTINCT FROM OLD.domain_id) EXECUTE FUNCTION dns_records_domain_check();

CREATE FUNCTION domains_delete_records() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM dns_records WHERE domain_id IN (SELECT id FROM deleted_domains);
  RETURN NULL;
END
$$;

CREATE TRIGGER domains_delete_records AFTER DELETE ON domains
  REFERENCING OLD TABLE AS deleted_domains FOR EACH STATEMENT EXECUTE FUNCTION domains_delete_records();
