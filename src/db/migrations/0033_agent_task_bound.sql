-- The most a task's output may hold (an account's backup: twice its disk quota); NULL for tasks
-- whose output the control plane does not bound (there are none that send bytes back today).
ALTER TABLE agent_tasks ADD COLUMN max_bytes bigint;
