-- The connections each of an account's MariaDB users may hold at once (MAX_USER_CONNECTIONS):
-- a tenant's runaway scripts cannot take every connection of a shared database server.

ALTER TABLE plans ADD COLUMN max_database_connections integer NOT NULL DEFAULT 20
  CHECK (max_database_connections BETWEEN 1 AND 10000);
