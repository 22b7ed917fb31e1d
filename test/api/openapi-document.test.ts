import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/cli/openapi.js';

/**
 * What the document must be beyond its shape: every body has an example that its own
 * schema accepts, every operation and parameter a description, every tag a declaration, and
 * the headers of the conventions named where they apply.
 */
type Json = Record<string, any>;
let doc: Json;
const operations: { name: string; method: string; path: string; op: Json }[] = [];

beforeAll(async () => {
  doc = await openApiDocument({ BERTH_BASE_URL: 'https://api.hosting.test' });
  for (const [path, item] of Object.entries<Json>(doc.paths))
    for (const [method, op] of Object.entries<Json>(item)) operations.push({ name: `${method} ${path}`, method, path, op });
}, 60_000);

describe('the OpenAPI document', () => {
  it('has an example for every request and response body, valid against its schema', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const problems: string[] = [];
    let checked = 0;
    const check = (where: string, content: Json | undefined) => {
      for (const [type, media] of Object.entries<Json>(content ?? {})) {
        if (!media.schema || media.schema.format === 'binary') continue;
        if (!('example' in media)) {
          problems.push(`${where} ${type}: no example`);
          continue;
        }
        const schema = JSON.parse(JSON.stringify(media.schema).replaceAll('"#/components/', '"doc#/components/'));
        const validate = ajv.compile(schema);
        checked++;
        if (!validate(media.example)) problems.push(`${where} ${type}: ${ajv.errorsText(validate.errors)}`);
      }
    };
    for (const { name, op } of operations) {
      check(`${name} request`, op.requestBody?.content);
      for (const [code, response] of Object.entries<Json>(op.responses)) check(`${name} ${code}`, response.content);
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(900);
  });

  it('lists null in the enum of every nullable enum (a strict client refuses the null otherwise)', () => {
    const missing: string[] = [];
    const walk = (schema: unknown, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      const s = schema as Json;
      if (Array.isArray(s.type) && s.type.includes('null') && Array.isArray(s.enum) && !s.enum.includes(null))
        missing.push(where);
      for (const [k, v] of Object.entries(s)) if (k !== 'example' && k !== 'examples') walk(v, `${where}/${k}`);
    };
    walk(doc, '#');
    expect(missing).toEqual([]);
  });

  it('describes every operation, with more than its status code, and every parameter', () => {
    const missing: string[] = [];
    for (const { name, op } of operations) {
      if (!op.description) missing.push(`${name}: no description`);
      // "204 once deleted." says how it answers, not what it does: the description says that first.
      else if (op.description.length < 40 || /^\d{3}\b/.test(op.description)) missing.push(`${name}: "${op.description}"`);
      for (const p of op.parameters ?? []) {
        const param = p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p;
        if (!param.description) missing.push(`${name}: parameter ${param.name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('declares every tag it uses, and takes its server from BERTH_BASE_URL', () => {
    const declared = new Set(doc.tags.map((t: Json) => t.name));
    const used = new Set(operations.flatMap(({ op }) => op.tags ?? []));
    expect([...used].filter((t) => !declared.has(t))).toEqual([]);
    expect(doc.servers).toEqual([expect.objectContaining({ url: 'https://api.hosting.test' })]);
  });

  it('names the request and response headers of the conventions where they apply', () => {
    const params = (op: Json) => (op.parameters ?? []).map((p: Json) => p.$ref ?? p.name);
    const create = doc.paths['/v1/accounts'].post;
    expect(params(create)).toContain('#/components/parameters/IdempotencyKey');
    expect(Object.keys(create.responses['201'].headers)).toEqual(
      expect.arrayContaining(['Location', 'ETag', 'Idempotent-Replayed', 'X-Request-Id', 'RateLimit']),
    );
    const get = doc.paths['/v1/accounts/{account_id}'].get;
    expect(params(get)).toContain('#/components/parameters/IfNoneMatch');
    expect(get.responses['304']).toBeDefined();
    expect(get.responses['200'].headers.ETag).toBeDefined();
    const patch = doc.paths['/v1/accounts/{account_id}'].patch;
    expect(params(patch)).toContain('#/components/parameters/IfMatch');
    expect(patch.responses['412']).toBeDefined();
    expect(doc.paths['/v1/accounts'].get.responses['200'].headers.Link).toBeDefined();
    expect(doc.paths['/v1/accounts'].get.responses['429'].headers['Retry-After']).toBeDefined();
    const download = doc.paths['/v1/backups/{backup_id}/download'].get;
    expect(download.responses['200'].headers['Repr-Digest']).toBeDefined();
    // A write that does not honour If-Match (cancelling a scheduled change) does not offer it, nor its 412.
    const cancel = doc.paths['/v1/domains/{domain}/changes/{change_id}'].delete;
    expect(params(cancel)).not.toContain('#/components/parameters/IfMatch');
    expect(cancel.responses['412']).toBeUndefined();
  });
});
