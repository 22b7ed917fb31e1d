-- A task that moves no file (an ACME proof placed on a web server) has none.
ALTER TABLE agent_tasks ALTER COLUMN file DROP NOT NULL;
