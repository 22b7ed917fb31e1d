-- Work that moves bytes on another server, one task at a time: a database dumped there and
-- streamed to the control plane's file, or loaded there from it. The control plane waits for the
-- agent's report; the row goes then.
CREATE TABLE agent_tasks (
  id text PRIMARY KEY,
  server_id text NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  spec jsonb NOT NULL,
  file text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_tasks_pending_idx ON agent_tasks (server_id) WHERE status = 'pending';
