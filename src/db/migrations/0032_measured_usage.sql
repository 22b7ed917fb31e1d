-- What the agent of another server measured there: a mailbox's files and a site's files (its
-- live release and what the site wrote into it). NULL: never measured, as on the local server,
-- whose files the control plane walks itself. Databases keep using size_bytes.
ALTER TABLE mail_addresses ADD COLUMN measured_bytes bigint;
ALTER TABLE sites ADD COLUMN measured_bytes bigint;
