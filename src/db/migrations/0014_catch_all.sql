-- A domain's catch-all: mail to an address of the domain that exists nowhere goes to
-- this address (a mailbox or forwarder of the domain); null: such mail is refused.
ALTER TABLE domains ADD COLUMN catch_all text CHECK (catch_all = lower(catch_all) AND length(catch_all) <= 254);
