import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { openApiDocument } from '../../src/cli/openapi.js';

export const SCHEMA_FILE = fileURLToPath(new URL('../src/schema.ts', import.meta.url));

const HEADER = `// Generated from Berth's OpenAPI document by \`npm run sdk:generate\` (openapi-typescript). Do not edit.\n\n`;

/**
 * The SDK's types, from the document a default configuration serves: the same on every machine
 * (no environment is read), so CI can check the checked-in file against it.
 */
export async function renderSchema(): Promise<string> {
  const document = await openApiDocument({});
  return HEADER + astToString(await openapiTS(document as unknown as Parameters<typeof openapiTS>[0]));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(SCHEMA_FILE, await renderSchema());
  process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
}
