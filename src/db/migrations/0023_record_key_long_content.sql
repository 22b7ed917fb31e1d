-- A B-tree entry holds at most about 2,700 bytes, so a set's key on (domain, name, type, content)
-- refused every record whose content was longer: a TXT record of 3,000 characters, within the
-- 65,000 octets the API accepts, failed with a server error. Content over 2,000 octets (with a
-- name of at most 253 the entry stays under the limit) is keyed by its MD5 instead; shorter
-- content is keyed by itself as before, which keeps a 10,000-record sync as fast as it was
-- (keying every record by its MD5 made it a tenth slower). The zone rules refuse a duplicate
-- before any write; this is the constraint behind them. A short content equal to `md5:` and a
-- long one's hash (or two long contents of one MD5) could only be made on purpose, in one's own
-- zone: the API answers it with 409. The leading columns still serve every lookup by domain,
-- name and type.
ALTER TABLE dns_records DROP CONSTRAINT dns_records_unique_key;
CREATE UNIQUE INDEX dns_records_unique_key ON dns_records
  (domain_id, name, type, (CASE WHEN octet_length(content) > 2000 THEN 'md5:' || md5(content) ELSE content END));
