import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Nullable, StringEnum } from '../../src/http/schemas.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { violations } from '../helpers/document-checked.js';

/**
 * The suite's check of every answer against the published document catches what a validating
 * proxy in front of Berth would: an undeclared status, an undeclared media type, a field the
 * schema lacks, a wrong type, a missing field, and a null where a nullable enum lists none.
 */
const Thing = Type.Object({
  id: Type.String(),
  size: Type.Integer(),
  kind: Nullable(StringEnum(['a', 'b'] as const)),
});
const BODIES: Record<string, [number, unknown]> = {
  good: [200, { id: 'x', size: 1, kind: null }],
  extra: [200, { id: 'x', size: 1, kind: 'a', secret: 's' }],
  text: [200, { id: 'x', size: '1', kind: 'a' }],
  missing: [200, { id: 'x', kind: 'a' }],
  other: [200, { id: 'x', size: 1, kind: 'c' }],
  status: [201, { id: 'x', size: 1, kind: 'a' }],
};

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    jobs: false,
    deps: {
      extraRoutes: (app) =>
        app.get(
          '/v1/test-things/:name',
          {
            config: { auth: false },
            schema: {
              tags: ['meta'],
              operationId: 'getTestThing',
              summary: 'A thing of the test',
              description: 'Answers the body its name picks, to be checked against the document.',
              params: Type.Object({ name: Type.String() }),
              response: { 200: Thing },
            },
          },
          // The route's types would refuse these bodies; the point is that the check catches them.
          async (req, reply): Promise<void> => {
            const [status, body] = BODIES[req.params.name] ?? [404, null];
            await (reply as unknown as { code(n: number): { send(b: unknown): Promise<unknown> } }).code(status).send(body);
          },
        ),
    },
  });
});
afterAll(async () => t.close());

describe('answers checked against the published document', () => {
  it('passes an answer the document describes, a null of a nullable enum included', async () => {
    violations.length = 0;
    expect((await t.get('/v1/test-things/good', null)).status).toBe(200);
    expect(violations).toEqual([]);
  });

  it.each(['extra', 'text', 'missing', 'other', 'status'])('catches the %s answer', async (name) => {
    violations.length = 0;
    await t.get(`/v1/test-things/${name}`, null);
    expect(violations, name).toHaveLength(1);
    violations.length = 0;
  });
});
