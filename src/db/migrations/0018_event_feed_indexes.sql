-- The event feed filtered by type, and a reseller's feed (its reach is reseller_id), walk an index
-- newest first instead of the whole feed: a rare type or a small reseller among 10,000,000 events
-- would otherwise read the table from the newest row until the page fills.
CREATE INDEX events_type_idx ON events (type, id);
CREATE INDEX events_reseller_idx ON events (reseller_id, id);
