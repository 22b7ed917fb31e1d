import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The parts of the OpenAPI document the CLI reads: operations, their parameters and bodies. */
export type Schema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  $ref?: string;
  readOnly?: boolean;
};
export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  description?: string;
  required?: boolean;
  schema?: Schema;
  $ref?: string;
}
export interface OperationDoc {
  operationId: string;
  tags?: string[];
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
interface Document {
  info: { version: string };
  paths: Record<string, Record<string, OperationDoc>>;
  components: { schemas: Record<string, Schema>; parameters: Record<string, Parameter> };
}

let loaded: Document | undefined;
/** The document shipped with the SDK (`npm run sdk:generate` writes it), read once. */
function document(): Document {
  loaded ??= JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@berth/sdk/openapi.json'), 'utf8')) as Document;
  return loaded;
}

export const resolve = (s: Schema | undefined): Schema | undefined =>
  s?.$ref ? resolve(document().components.schemas[s.$ref.split('/').pop() as string]) : s;

/** Whether the operation answers a page (`{data, next_cursor}`): the CLI walks those. */
export const answersPage = (op: OperationDoc): boolean =>
  Boolean(resolve(op.responses?.['200']?.content?.['application/json']?.schema)?.properties?.next_cursor);

/** `"post /v1/emails"` → the operation, with its parameters' `$ref`s resolved. */
export function operation(key: string): OperationDoc & { method: string; path: string } {
  const [method = '', path = ''] = key.split(' ');
  const op = document().paths[path]?.[method];
  if (!op) throw new Error(`the OpenAPI document has no ${key}`);
  const parameters = (op.parameters ?? []).map((p) =>
    p.$ref ? (document().components.parameters[p.$ref.split('/').pop() as string] as Parameter) : p,
  );
  return { ...op, parameters, method, path };
}

/** Every operation of the document (its parameters' `$ref`s resolved), the component schemas, the API's version. */
export function operations(): {
  ops: (OperationDoc & { method: string; path: string })[];
  components: Record<string, Schema>;
  version: string;
} {
  const ops = Object.entries(document().paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => operation(`${method} ${path}`)),
  );
  return { ops, components: document().components.schemas, version: document().info.version };
}
