-- A domain's mail apply unit (its mailboxes and forwarders, applied together) moves into a table
-- of its own: the mail module writes it, while the domains table stays the domains module's.
-- A domain whose mail was never changed has no row: its unit is at generation 1, applied 0.

CREATE TABLE mail_units (
  domain_id text PRIMARY KEY REFERENCES domains (id) ON DELETE CASCADE,
  generation integer NOT NULL DEFAULT 1,
  applied_generation integer NOT NULL DEFAULT 0,
  sync_state text NOT NULL DEFAULT 'pending' CHECK (sync_state IN ('pending', 'in_sync', 'error')),
  sync_error text
);

INSERT INTO mail_units (domain_id, generation, applied_generation, sync_state, sync_error)
  SELECT id, mail_generation, mail_applied_generation, mail_sync_state, mail_sync_error FROM domains;

ALTER TABLE domains
  DROP COLUMN mail_generation,
  DROP COLUMN mail_applied_generation,
  DROP COLUMN mail_sync_state,
  DROP COLUMN mail_sync_error;
