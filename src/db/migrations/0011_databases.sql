-- MariaDB databases, their users and grants. An account's databases, users and
-- grants form one apply unit (grants join databases and users of the same account), whose
-- generation lives in database_units; the row exists once the account has had any of them.

ALTER TABLE plans
  ADD COLUMN max_databases integer NOT NULL DEFAULT 10 CHECK (max_databases >= 0),
  ADD COLUMN max_database_users integer NOT NULL DEFAULT 10 CHECK (max_database_users >= 0);

CREATE TABLE database_units (
  account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  generation integer NOT NULL DEFAULT 1,
  applied_generation integer NOT NULL DEFAULT 0,
  sync_state text NOT NULL DEFAULT 'pending' CHECK (sync_state IN ('pending', 'in_sync', 'error')),
  sync_error text
);

CREATE TABLE databases (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  -- <account username>_<suffix>: MariaDB's 64-character limit, characters safe in any quoting.
  name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9]{2,31}_[a-z0-9_]{1,32}$' AND length(name) <= 64),
  charset text NOT NULL,
  -- (COLLATION is a reserved word in PostgreSQL.)
  collation_name text NOT NULL,
  -- Measured on the server (data and indexes), at each apply and periodically.
  size_bytes bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  CONSTRAINT databases_name_key UNIQUE (name)
);
CREATE INDEX databases_account_idx ON databases (account_id, id);

CREATE TABLE database_users (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  username text NOT NULL CHECK (username ~ '^[a-z][a-z0-9]{2,31}_[a-z0-9_]{1,47}$' AND length(username) <= 80),
  -- mysql_native_password's form (*<SHA1(SHA1(password))>): what MariaDB verifies, never the password.
  password_hash text NOT NULL CHECK (password_hash ~ '^\*[0-9A-F]{40}$'),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  CONSTRAINT database_users_username_key UNIQUE (username)
);
CREATE INDEX database_users_account_idx ON database_users (account_id, id);

-- A grant joins a database and a user of the same account: the composite keys make a grant
-- across accounts impossible, whatever the code above does.
ALTER TABLE databases ADD CONSTRAINT databases_account_id_key UNIQUE (account_id, id);
ALTER TABLE database_users ADD CONSTRAINT database_users_account_id_key UNIQUE (account_id, id);
CREATE TABLE database_grants (
  account_id text NOT NULL,
  database_id text NOT NULL,
  user_id text NOT NULL,
  privileges text[] NOT NULL CHECK (cardinality(privileges) > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (database_id, user_id),
  FOREIGN KEY (account_id, database_id) REFERENCES databases (account_id, id) ON DELETE CASCADE,
  FOREIGN KEY (account_id, user_id) REFERENCES database_users (account_id, id) ON DELETE CASCADE
);
CREATE INDEX database_grants_user_idx ON database_grants (user_id);

-- A schedule that backed up everything there was keeps doing so.
UPDATE backup_schedules SET include = include || '{databases}' WHERE include @> '{sites,emails,dns}';
