import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

/**
 * Every answer of a test app, checked against the OpenAPI document the app publishes at
 * `/v1/openapi.json`, as a validating proxy in front of Berth would check it: the status must be
 * one the operation declares, the media type one that status declares, and the body valid
 * against that schema. Objects whose schema does not say otherwise are closed here
 * (`additionalProperties: false`), so a field the document lacks is caught as well. What breaks
 * the document is collected in `violations` (test/helpers/record-responses.ts fails the file).
 */

type Json = Record<string, any>;

/** `METHOD /openapi/{path} status` of each JSON answer with content (a list counts once it holds an item). */
export const responsesSeen = new Set<string>();
export const violations: string[] = [];

const JSON_TYPES = /^application\/(?:[\w.+-]+\+)?json\b/;

/** Closes every object schema that leaves `additionalProperties` open by default. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Json = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'example' ? v : closed(v)]));
  if (out.type === 'object' && out.properties && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

interface Checker {
  doc: Json;
  validatorFor: (key: string, schema: Json) => ValidateFunction;
  errorsText: Ajv2020['errorsText'];
}

/**
 * One checker per document, shared by the apps of a worker (files share its modules): the apps
 * publish the same document, and compiling its schemas for every app was about 1 % of the
 * suite's CPU (bench/HISTORY.md, 2026-12-01).
 */
const checkers = new Map<string, Checker>();

function checkerOf(doc: Json): Checker {
  const key = JSON.stringify(doc);
  let checker = checkers.get(key);
  if (!checker) {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'doc', components: closed(doc.components) as Json });
    const validators = new Map<string, ValidateFunction>();
    const validatorFor = (where: string, schema: Json) => {
      let v = validators.get(where);
      if (!v) {
        v = ajv.compile(JSON.parse(JSON.stringify(closed(schema)).replaceAll('"#/components/', '"doc#/components/')) as Json);
        validators.set(where, v);
      }
      return v;
    };
    checker = { doc, validatorFor, errorsText: (errors) => ajv.errorsText(errors) };
    checkers.set(key, checker);
  }
  return checker;
}

export function checkResponsesAgainstDocument(app: FastifyInstance): void {
  let checker: Checker | null = null;

  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions.url;
    if (!route) return payload; // no route matched: the not-found handler's problem
    checker ??= checkerOf(app.swagger());
    const { doc } = checker;
    const path = route.replace(/:(\w+)/g, '{$1}');
    const method = request.method.toLowerCase();
    const op = doc.paths?.[path]?.[method] as Json | undefined;
    if (!op) return payload; // hidden routes (the document itself)
    const status = String(reply.statusCode);
    const where = `${request.method} ${path} ${status}`;
    const response = (op.responses?.[status] ?? op.responses?.default) as Json | undefined;
    if (!response) {
      violations.push(
        `${where}: the operation declares no ${status} (it declares ${Object.keys(op.responses ?? {}).join(', ')})`,
      );
      return payload;
    }
    // 204 and 304 go out without a body, whatever was handed to send().
    if (status === '204' || status === '304') return payload;
    const type = String(reply.getHeader('content-type') ?? '')
      .replace(/;.*/, '')
      .trim();
    if (!JSON_TYPES.test(type) || typeof payload !== 'string' || payload === '') return payload;
    const media = response.content?.[type] as Json | undefined;
    if (!media?.schema) {
      violations.push(
        `${where}: ${type} is not a media type it declares (${Object.keys(response.content ?? {}).join(', ') || 'none'})`,
      );
      return payload;
    }
    const body = JSON.parse(payload) as unknown;
    const validate = checker.validatorFor(`${where} ${type}`, media.schema as Json);
    if (!validate(body)) violations.push(`${where}: ${checker.errorsText(validate.errors)}\n  sent: ${payload.slice(0, 500)}`);
    else if (status.startsWith('2') && !(Array.isArray((body as Json)?.data) && (body as Json).data.length === 0))
      responsesSeen.add(`${request.method} ${path} ${status}`);
    return payload;
  });
}
