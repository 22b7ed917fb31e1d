-- A task's waiter renews `alive_at` while it waits, as a job's process renews its lease. A task
-- whose waiter died (its control plane killed) is handed out only until the lease lapses: an
-- agent coming back does not dump or pack again for nobody before the resumed move's own task.
ALTER TABLE agent_tasks ADD COLUMN alive_at timestamptz NOT NULL DEFAULT now();
