import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { build, DIST } from '../../sdk/scripts/build.js';
import { createTestApp, OPERATOR_TOKEN, type TestApp } from '../helpers/app.js';

/** The SDK as published (`npm run sdk:build`): plain JavaScript that Node 20 runs without a loader, and no Node built-ins (browsers). */
let t: TestApp;
let baseUrl: string;
beforeAll(async () => {
  build();
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => t.close());

it('compiles to ES modules and declarations that use no Node built-in', () => {
  const files = readdirSync(DIST);
  expect(files).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'package.json', 'openapi.json', 'README.md']));
  for (const file of files.filter((f) => f.endsWith('.js'))) {
    const code = readFileSync(path.join(DIST, file), 'utf8');
    expect(code, file).not.toMatch(/from ['"]node:|require\(|\bprocess\.|\bBuffer\./);
  }
  const manifest = JSON.parse(readFileSync(path.join(DIST, 'package.json'), 'utf8')) as {
    exports: Record<string, unknown>;
    private?: boolean;
  };
  expect(manifest.private).toBeUndefined();
  expect(manifest.exports['.']).toEqual({ types: './index.d.ts', default: './index.js' });
});

it('runs on plain Node (no TypeScript loader) against a real server', async () => {
  const script = `
    import { createBerth, BerthError } from ${JSON.stringify(path.join(DIST, 'index.js'))};
    const berth = createBerth({ baseUrl: ${JSON.stringify(baseUrl)}, token: ${JSON.stringify(OPERATOR_TOKEN)} });
    const { data } = await berth.GET('/v1/me');
    let code = null;
    try { await berth.GET('/v1/plans/{plan_id}', { params: { path: { plan_id: 'pln_01jd3x9v6ef8tb2q4w5n7k8m9p' } } }); }
    catch (err) { code = err instanceof BerthError ? err.code : String(err); }
    console.log(JSON.stringify({ kind: data.principal.kind, code }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH },
  });
  expect(JSON.parse(stdout)).toEqual({ kind: 'operator', code: 'not_found' });
});
