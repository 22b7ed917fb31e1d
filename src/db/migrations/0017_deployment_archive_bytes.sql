-- A deployment's `size_bytes` is its unpacked size; the uploaded archive's size is kept beside
-- it (null for deployments made before).
ALTER TABLE deployments ADD COLUMN archive_bytes bigint CHECK (archive_bytes >= 0);
