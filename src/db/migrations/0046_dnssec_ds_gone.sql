-- A zone being unsigned stays signed until no resolver can still hold its DS: the longest TTL the
-- DS was seen with at the parent, and when the parent was first seen without it.
ALTER TABLE dnssec ADD COLUMN parent_ds_ttl integer, ADD COLUMN parent_ds_gone_at timestamptz;
