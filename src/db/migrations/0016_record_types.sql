-- Record types users ask for (issue "first hour", item 11): HTTPS and SVCB (RFC 9460), TLSA
-- (RFC 6698), SSHFP (RFC 4255), DS for delegated sub-zones (RFC 4034), PTR, and ALIAS at the
-- apex (answered by the DNS server with its target's addresses).
ALTER TABLE dns_records DROP CONSTRAINT dns_records_type_check;
ALTER TABLE dns_records ADD CONSTRAINT dns_records_type_check CHECK (
  type IN ('SOA', 'A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SRV', 'CAA', 'HTTPS', 'SVCB', 'TLSA', 'SSHFP', 'DS', 'PTR', 'ALIAS')
);
