-- Each account's usage as last measured (every BERTH_USAGE_METER_MS, by every process alike),
-- for the usage in bulk a billing system pages through: `updated_at` moves only when the usage
-- changed, so `updated_since` gives the accounts to update.
CREATE TABLE account_usage (
  account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  usage jsonb NOT NULL,
  measured_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX account_usage_updated_at ON account_usage (updated_at);
