-- Which records a template wrote (the default web records, the mail records). Switching mail off
-- removes only those: an owner's record with the same content is the owner's and stays. An
-- owner's edit makes a template record the owner's.
ALTER TABLE dns_records ADD COLUMN template boolean NOT NULL DEFAULT false;

-- Existing zones: the records that match the mail template were treated as the template's.
UPDATE dns_records r SET template = true FROM domains d
WHERE r.domain_id = d.id AND NOT r.managed AND (
  (r.name = '@' AND r.type = 'MX' AND r.content = '10 mail.' || d.name || '.')
  OR (r.name = '@' AND r.type = 'TXT' AND r.content = 'v=spf1 mx -all')
  OR (r.name = 'mail' AND r.type IN ('A', 'AAAA'))
);
