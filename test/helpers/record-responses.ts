// Set up before every test file: when it is done, what its apps answered is left for the
// response-coverage check (test/helpers/response-coverage.ts) to sum.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, inject } from 'vitest';
import { responsesSeen } from './schema-checked-json.js';

afterAll(() => {
  const name = `${path.basename(expect.getState().testPath ?? 'test')}-${process.pid}-${Date.now()}.json`;
  writeFileSync(path.join(inject('responsesSeenDir'), name), JSON.stringify({ seen: [...responsesSeen] }));
});
