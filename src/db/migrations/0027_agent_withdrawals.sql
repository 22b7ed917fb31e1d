-- What a server's agent must take away: a terminated account's databases, sites, PHP pools and
-- Unix user on that server (its rows are gone with it, so no unit names them any more). The agent
-- pulls these beside its units and reports each done; the row then goes.
CREATE TABLE agent_withdrawals (
  server_id text NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  account_id text NOT NULL,
  username text NOT NULL,
  roles text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (server_id, account_id)
);
