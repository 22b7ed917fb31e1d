-- DNS change sets: applied at once, or scheduled and applied by whichever process runs the job.
CREATE TABLE dns_changes (
  id text PRIMARY KEY,
  domain_id text NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('scheduled', 'applied', 'failed', 'canceled')),
  apply_at timestamptz,
  applied_at timestamptz,
  request jsonb NOT NULL,
  result jsonb,
  error jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);
CREATE INDEX dns_changes_domain_idx ON dns_changes (domain_id, id);
