-- Finds the domains below a name (`sub.example.com` under `example.com`) through an index:
-- reverse(name) turns the suffix into a prefix that a text_pattern_ops btree can range-scan.
CREATE INDEX domains_reversed_name_idx ON domains (reverse(name) text_pattern_ops);
