-- A grant is a resource of its own (GET, PUT, DELETE under its database): it gets a version, and
-- with it an ETag, If-None-Match and If-Match like every other resource.

ALTER TABLE database_grants ADD COLUMN version integer NOT NULL DEFAULT 1;
