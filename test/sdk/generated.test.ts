import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { renderSchema, SCHEMA_FILE } from '../../sdk/scripts/generate.js';

it("the SDK's generated types match the OpenAPI document (rebuild with `npm run sdk:generate`)", async () => {
  expect(readFileSync(SCHEMA_FILE, 'utf8') === (await renderSchema())).toBe(true);
});
