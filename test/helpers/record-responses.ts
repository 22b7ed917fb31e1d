// Set up before every test file: when it is done, an answer of its apps that broke the published
// document fails it, and what they answered is left for the response-coverage check
// (test/helpers/response-coverage.ts) to sum.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, inject } from 'vitest';
import { responsesSeen, violations } from './document-checked.js';

afterAll(() => {
  // Test files share a worker's modules (isolate: false): what one file saw is not the next one's.
  const seen = [...responsesSeen];
  const broken = violations.splice(0);
  responsesSeen.clear();
  const name = `${path.basename(expect.getState().testPath ?? 'test')}-${process.pid}-${Date.now()}.json`;
  writeFileSync(path.join(inject('responsesSeenDir'), name), JSON.stringify({ seen }));
  if (broken.length > 0) throw new Error(`answers that break the published document:\n${broken.join('\n')}`);
});
