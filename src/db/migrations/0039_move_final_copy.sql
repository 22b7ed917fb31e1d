-- A move copies the account while the source still serves it (`copy`, now before `freeze`), then,
-- frozen, only what changed since (`final_copy`). A move past its freeze already has its copy to
-- come as the final one (made whole: there is no earlier copy), its early copy skipped.
UPDATE moves SET steps = jsonb_build_array(
    steps -> 0,
    steps -> 1,
    jsonb_build_object('name', 'copy',
      'state', CASE WHEN steps -> 2 ->> 'state' = 'pending' AND status NOT IN ('completed', 'failed', 'canceled')
                    THEN 'pending' ELSE 'skipped' END,
      'started_at', NULL, 'ended_at', NULL),
    steps -> 2,
    jsonb_set(steps -> 3, '{name}', '"final_copy"')
  ) || (steps - 3 - 2 - 1 - 0)
  WHERE jsonb_array_length(steps) = 10 AND steps -> 3 ->> 'name' = 'copy';
