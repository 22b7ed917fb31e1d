import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { DOCUMENT_FILE, render, SCHEMA_FILE } from '../../sdk/scripts/generate.js';

it("the SDK's generated types and document match the OpenAPI document (rebuild with `npm run sdk:generate`)", async () => {
  const { schema, document } = await render();
  expect(readFileSync(SCHEMA_FILE, 'utf8') === schema).toBe(true);
  expect(readFileSync(DOCUMENT_FILE, 'utf8') === document).toBe(true);
});
