import Fastify from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { plainJson } from '../../src/http/serialization.js';
import { schemaCheckedJson } from '../helpers/schema-checked-json.js';

const Thing = {
  $id: 'Thing',
  type: 'object',
  required: ['id', 'size'],
  properties: { id: { type: 'string' }, size: { type: 'integer' }, note: { type: ['string', 'null'] } },
};

async function serve(factory: typeof plainJson, body: unknown) {
  const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: factory } } });
  app.addSchema(Thing);
  app.get(
    '/',
    { schema: { response: { 200: { type: 'object', properties: { data: { type: 'array', items: { $ref: 'Thing' } } } } } } },
    async () => body,
  );
  const r = await app.inject({ url: '/' });
  await app.close();
  return r;
}

describe('response serialization', () => {
  it('sends what JSON.stringify writes, keys in the object’s own order', async () => {
    const body = { data: [{ size: 2, id: 'a', note: null }] };
    for (const factory of [plainJson, schemaCheckedJson]) {
      const r = await serve(factory, body);
      expect(r.statusCode).toBe(200);
      expect(r.body).toBe(JSON.stringify(body));
    }
  });

  it('in the tests, fails a response its schema would have changed', async () => {
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      for (const data of [
        [{ id: 'a', size: 2, secret: 'x' }], // a field the schema lacks
        [{ id: 'a', size: '2' }], // a number as text, which the schema's serializer would coerce
        [{ id: 'a', size: 2.5 }], // not an integer
        [{ id: 'a' }], // a required field missing
      ]) {
        expect((await serve(schemaCheckedJson, { data })).statusCode, JSON.stringify(data)).toBe(500);
        // The production serializer sends it as it is: the suite is what keeps representations honest.
        expect((await serve(plainJson, { data })).statusCode).toBe(200);
      }
      expect(quiet).toHaveBeenCalledWith(expect.stringContaining('GET / 200'));
    } finally {
      quiet.mockRestore();
    }
  });
});
