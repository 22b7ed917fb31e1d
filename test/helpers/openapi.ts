import type { TestApp } from './app.js';

export interface Operation {
  method: string;
  /** The OpenAPI path, `/v1/sites/{site_id}`. */
  path: string;
  operationId: string;
  pathParams: string[];
  queryParams: { name: string; schema: Schema }[];
  /** The body's media types, the JSON body's schema ($refs resolved) and its example, if any. */
  body: { types: string[]; schema: Schema | null; example: unknown } | null;
}

export type Schema = Record<string, any>;

/** Every operation of the service's own OpenAPI document: what the reach and fuzz tests walk. */
export async function operationsOf(t: TestApp): Promise<Operation[]> {
  const doc = (await t.get('/v1/openapi.json', null)).body;
  const resolve = (s: Schema | undefined): Schema | null => {
    if (!s) return null;
    if (typeof s.$ref === 'string') return resolve(doc.components.schemas[s.$ref.split('/').pop() as string]);
    return s;
  };
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (typeof op !== 'object' || !op.operationId) continue;
      const params: { in: string; name: string; schema: Schema }[] = op.parameters ?? [];
      const content: Record<string, { schema?: Schema; example?: unknown }> | undefined = op.requestBody?.content;
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: resolve(p.schema) ?? {} })),
        body: content
          ? {
              types: Object.keys(content),
              schema: resolve(content['application/json']?.schema),
              example: content['application/json']?.example,
            }
          : null,
      });
    }
  }
  return out;
}

/** Fills `{param}`s from a function of the collection segment before each. */
export function urlOf(op: Operation, idFor: (collection: string, param: string) => string | undefined): string {
  const segments = op.path.split('/');
  return segments
    .map((seg, i) => {
      const m = /^\{(.+)\}$/.exec(seg);
      if (!m) return seg;
      const id = idFor(segments[i - 1] as string, m[1] as string);
      if (id === undefined) throw new Error(`no id for {${m[1]}} after /${segments[i - 1]} in ${op.operationId}`);
      return encodeURIComponent(id);
    })
    .join('/');
}
