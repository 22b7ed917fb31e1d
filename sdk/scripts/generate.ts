import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { openApiDocument } from '../../src/cli/openapi.js';

export const SCHEMA_FILE = fileURLToPath(new URL('../src/schema.ts', import.meta.url));
/** The document itself, shipped with the SDK: the `berth` CLI builds its commands and flags from it. */
export const DOCUMENT_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url));

const HEADER = `// Generated from Berth's OpenAPI document by \`npm run sdk:generate\` (openapi-typescript). Do not edit.\n\n`;

/**
 * The SDK's types, from the document a default configuration serves: the same on every machine
 * (no environment is read), so CI can check the checked-in file against it.
 */
export async function render(): Promise<{ schema: string; document: string }> {
  const document = await openApiDocument({});
  return {
    schema: HEADER + astToString(await openapiTS(document as unknown as Parameters<typeof openapiTS>[0])),
    document: JSON.stringify(document) + '\n',
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { schema, document } = await render();
  writeFileSync(SCHEMA_FILE, schema);
  writeFileSync(DOCUMENT_FILE, document);
  process.stdout.write(`wrote ${SCHEMA_FILE} and ${DOCUMENT_FILE}\n`);
}
