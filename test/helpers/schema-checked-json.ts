import { isDeepStrictEqual } from 'node:util';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { SerializerFactory } from '../../src/http/serialization.js';

/**
 * The responses this process checked with content, as `METHOD /openapi/{path} status` (a list
 * counts once it held an item): what test/helpers/response-coverage.ts sums over the suite.
 */
export const responsesSeen = new Set<string>();

const hasContent = (data: unknown) => {
  const items = (data as { data?: unknown } | null)?.data;
  return !(Array.isArray(items) && items.length === 0);
};

/**
 * The app's serializer (`JSON.stringify`), checked on every response of the suite against the
 * serializer Fastify would have compiled from the route's response schema: a field the schema
 * lacks, a required field missing or a value it would coerce fails the request with a 500 that
 * names the route. Order of keys aside, the two must agree.
 */
export const schemaCheckedJson: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    const bySchema = compile(route);
    const openApiPath = route.url.replace(/:(\w+)/g, '{$1}');
    return (data: unknown) => {
      const sent = JSON.stringify(data);
      const fail = (why: string) => {
        const problem = `${route.method} ${route.url} ${route.httpStatus}: ${why}\nsent: ${sent}`;
        console.error(problem); // the 500 alone would not say why
        return new Error(problem);
      };
      let expected: string;
      try {
        expected = bySchema(data);
      } catch (err) {
        throw fail(`the schema's serializer refused the response (${(err as Error).message})`);
      }
      if (!isDeepStrictEqual(JSON.parse(sent), JSON.parse(expected))) throw fail(`the schema would have sent ${expected}`);
      if (hasContent(data)) responsesSeen.add(`${route.method} ${openApiPath} ${route.httpStatus}`);
      return sent;
    };
  };
};
