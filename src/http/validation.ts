import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { invalid, malformed, notFound } from '../lib/errors.js';

/** A validator for a schema of a part of the request: bodies strict, text (query, params, headers) coerced. */
type Compile = (schema: object, part: 'body' | 'text') => ValidateFunction;

/**
 * The compiler for each set of shared schemas, kept for the process with what it compiled, by
 * the schema's JSON: an app built again in the same process (the tests build hundreds, each
 * given its own copies of the routes' schemas) compiles nothing its predecessors compiled.
 */
const compilers = new Map<string, Compile>();

function compilerFor(shared: object[]): Compile {
  const key = JSON.stringify(shared);
  let compile = compilers.get(key);
  if (!compile) {
    const common = { allErrors: true, removeAdditional: false as const, useDefaults: true, strict: false };
    const ajv = {
      body: new Ajv.default({ ...common, coerceTypes: false }),
      text: new Ajv.default({ ...common, coerceTypes: 'array' as const }),
    };
    for (const a of [ajv.body, ajv.text]) {
      addFormats.default(a);
      for (const s of shared) a.addSchema(s);
    }
    const compiled = new Map<string, ValidateFunction>();
    compile = (schema, part) => {
      const at = `${part} ${JSON.stringify(schema)}`;
      let validate = compiled.get(at);
      if (!validate) {
        validate = ajv[part].compile(schema);
        compiled.set(at, validate);
      }
      return validate;
    };
    compilers.set(key, compile);
  }
  return compile;
}

/**
 * Two validators: bodies are checked strictly (no type coercion, unknown fields rejected, every
 * error reported), while query strings, params and headers coerce their text into numbers and
 * booleans as their schemas say.
 */
export function installValidation(app: FastifyInstance): void {
  const compile = compilerFor(Object.values(app.getSchemas()) as object[]);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    // A binary body (an uploaded archive) is a stream its handler checks while reading it.
    if (httpPart === 'body' && (schema as { format?: string }).format === 'binary') return () => true;
    return compile(schema, httpPart === 'body' ? 'body' : 'text') as never;
  });
}

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** No request body of the API nests deeper; deeper ones would only feed recursion further on. */
const MAX_DEPTH = 32;

type InputProblem = { pointer: string; problem: 'nul' | 'not_text' | 'too_deep' };

/** What a string holds that no field may: U+0000, or a lone UTF-16 surrogate (half a character, which no database stores). */
function stringProblem(value: string): InputProblem['problem'] | null {
  if (value.includes('\u0000')) return 'nul';
  // String.prototype.isWellFormed (Node 20): native, one pass; ES2022's lib does not declare it yet.
  return (value as string & { isWellFormed(): boolean }).isWellFormed() ? null : 'not_text';
}

interface Visit {
  value: unknown;
  key: string;
  parent: Visit | null;
  depth: number;
}

/** A visit's JSON pointer, made only for the one reported (not for each of 10,000 records' fields). */
const pointerOf = (v: Visit): string => (v.parent ? `${pointerOf(v.parent)}/${escapePointer(v.key)}` : '');

/**
 * The first string or member name holding U+0000 or a lone surrogate, or the first value nested
 * deeper than MAX_DEPTH, in parsed JSON; null when there is none. Walked with a stack of its own,
 * so no input can exhaust the call stack.
 */
function inputProblem(root: unknown): InputProblem | null {
  const stack: Visit[] = [{ value: root, key: '', parent: null, depth: 0 }];
  while (stack.length) {
    const visit = stack.pop()!;
    const { value, depth } = visit;
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem) return { pointer: pointerOf(visit), problem };
      continue;
    }
    // Plain parsed JSON only: a streamed upload is checked by its own reader.
    const proto: unknown = value !== null && typeof value === 'object' ? Object.getPrototypeOf(value) : undefined;
    if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) continue;
    if (depth >= MAX_DEPTH) return { pointer: pointerOf(visit), problem: 'too_deep' };
    for (const key in value as Record<string, unknown>) {
      if (!Object.hasOwn(value as object, key)) continue;
      const child = { value: (value as Record<string, unknown>)[key], key, parent: visit, depth: depth + 1 };
      const problem = stringProblem(key);
      if (problem) return { pointer: pointerOf(child), problem };
      stack.push(child);
    }
  }
  return null;
}

const DETAILS = {
  nul: { code: 'invalid_character', detail: 'must not contain the NUL character (U+0000)' },
  not_text: {
    code: 'invalid_character',
    detail: 'must be Unicode text: a lone UTF-16 surrogate (U+D800 to U+DFFF without its pair) is half a character',
  },
  too_deep: { code: 'too_deep', detail: `nests deeper than ${MAX_DEPTH} levels` },
};

/**
 * U+0000 and lone surrogates cannot be stored in PostgreSQL text and mean nothing in a name, a
 * record or a filter, and no body of the API nests deeper than MAX_DEPTH: all refused before
 * validation wherever they stand (path: 404, query: 400, body: 422), the same way in every field.
 */
export function installInputGuard(app: FastifyInstance): void {
  // A synchronous hook (a throw is its error): no promise per request for a check that never waits.
  app.addHook('preValidation', (request, _reply, done) => {
    // Fastify's params and query objects have prototypes of their own: copied into plain ones.
    if (inputProblem({ ...(request.params as object) }) !== null) throw notFound();
    const inQuery = inputProblem({ ...(request.query as object) });
    if (inQuery !== null) {
      throw malformed('A query parameter holds what no field may (U+0000, or a lone surrogate).', [
        { pointer: `/query${inQuery.pointer}`, ...DETAILS[inQuery.problem] },
      ]);
    }
    const inBody = inputProblem(request.body);
    if (inBody !== null) throw invalid([{ pointer: inBody.pointer, ...DETAILS[inBody.problem] }]);
    done();
  });
}
