-- The feed followed with `after`: ordered by the writing transaction's id, and answered only up to
-- the oldest transaction of this database still running, so an event whose transaction commits late is never
-- passed over (its id, made at insert time, may be older than one already answered).
ALTER TABLE events ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX events_xid_idx ON events (xid, id);
