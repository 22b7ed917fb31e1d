import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

/**
 * Two validators: bodies are checked strictly (no type coercion, unknown fields rejected, every
 * error reported), while query strings, params and headers coerce their text into numbers and
 * booleans as their schemas say.
 */
export function installValidation(app: FastifyInstance): void {
  const common = { allErrors: true, removeAdditional: false as const, useDefaults: true, strict: false };
  const body = new Ajv.default({ ...common, coerceTypes: false });
  const text = new Ajv.default({ ...common, coerceTypes: 'array' as const });
  for (const ajv of [body, text]) addFormats.default(ajv);
  const shared = Object.values(app.getSchemas()) as object[];
  for (const s of shared) {
    body.addSchema(s);
    text.addSchema(s);
  }
  app.setValidatorCompiler(({ schema, httpPart }) => {
    // A binary body (an uploaded archive) is a stream its handler checks while reading it.
    if (httpPart === 'body' && (schema as { format?: string }).format === 'binary') return () => true;
    return (httpPart === 'body' ? body : text).compile(schema as object) as never;
  });
}
