-- A task whose output (a tar.gz) is unpacked into `file`, a directory, as it arrives, instead of
-- being stored there to be unpacked afterwards (a move's copy, a backup of another server's files).
ALTER TABLE agent_tasks ADD COLUMN unpack boolean NOT NULL DEFAULT false;
