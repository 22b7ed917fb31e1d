import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, OPERATOR_TOKEN, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';

/**
 * `berth mcp` driven by the MCP SDK's own client, over stdio and over Streamable HTTP, against a
 * real server: the tools' names and annotations, the read-only default under 40 tools, a call
 * that succeeds, a problem as an `isError` result, and a destructive call refused without `confirm`.
 */
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
let t: TestApp;
let env: Record<string, string>;
let home: string;
let domain: { id: string; name: string };
const children: ChildProcess[] = [];

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  home = mkdtempSync(path.join(tmpdir(), 'berth-mcp-'));
  env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    BERTH_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`,
    BERTH_TOKEN: OPERATOR_TOKEN,
  };
  const account = await createAccount(t, (await createPlan(t)).id);
  domain = (await t.post('/v1/domains', { account_id: account.id, name: 'mcp-tools.com' })).body;
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await t.close();
  rmSync(home, { recursive: true, force: true });
});

const client = () => new Client({ name: 'berth-test', version: '1.0.0' });

describe('berth mcp', () => {
  it('over stdio: valid names, read-only by default (under 40 tools), a list with its cursor, a problem as isError', async () => {
    const c = client();
    await c.connect(
      new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', MAIN, 'mcp'], env, stderr: 'pipe' }),
    );
    try {
      const { tools } = await c.listTools();
      expect(tools.length).toBeGreaterThan(10);
      expect(tools.length).toBeLessThan(40);
      for (const tool of tools) {
        expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
        expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
      }
      const names = tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['listAccounts', 'getDomain', 'listDnsRecords', 'getOperation']));
      expect(names).not.toContain('createDomain');
      expect(names).not.toContain('deleteDomain');
      // The token is the process's, never an argument.
      for (const tool of tools) expect(Object.keys(tool.inputSchema.properties ?? {})).not.toContain('token');

      const listed = await c.callTool({ name: 'listDomains', arguments: { limit: 1 } });
      expect(listed.isError).toBeFalsy();
      expect(listed.structuredContent).toMatchObject({ data: [expect.objectContaining({ name: domain.name })] });
      expect(listed.structuredContent).toHaveProperty('next_cursor');

      const missing = await c.callTool({ name: 'getDomain', arguments: { domain: 'nowhere-at-all.com' } });
      expect(missing.isError).toBe(true);
      expect(missing.structuredContent).toMatchObject({ status: 404, code: 'not_found' });
      const unknown = await c.callTool({ name: 'deleteDomain', arguments: { domain: domain.id } });
      expect(unknown.isError).toBe(true);
      expect((await t.get(`/v1/domains/${domain.id}`)).status).toBe(200);
    } finally {
      await c.close();
    }
  });

  it('over Streamable HTTP with writes and destructive tools: confirm required, a 202 followed with its progress', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        MAIN,
        'mcp',
        '--http',
        '0',
        '--toolsets',
        'domains,operations',
        '--allow-writes',
        '--allow-destructive',
      ],
      { env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(child);
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /on (http:\/\/\S+)/.exec(err);
        if (m) resolve(m[1] as string);
      });
      child.on('exit', () => reject(new Error(`berth mcp --http exited: ${err}`)));
    });
    const c = client();
    await c.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const { tools } = await c.listTools();
      const del = tools.find((tool) => tool.name === 'deleteDomain');
      expect(del?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
      expect(del?.inputSchema.required).toEqual(expect.arrayContaining(['domain', 'confirm']));
      expect(tools.find((tool) => tool.name === 'createDomain')?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
      });

      // A 202: followed until its operation ends, its progress notified.
      const progress: number[] = [];
      const dnssec = await c.callTool(
        { name: 'updateDomainDnssec', arguments: { domain: domain.id, body: { enabled: false } } },
        undefined,
        { onprogress: (p) => void progress.push(p.progress) },
      );
      expect(dnssec.isError).toBeFalsy();
      expect(dnssec.structuredContent).toMatchObject({ type: 'domain.dnssec.update', status: 'succeeded' });
      expect(progress).toContain(100);

      const refused = await c.callTool({ name: 'deleteDomain', arguments: { domain: domain.id, confirm: 'something-else' } });
      expect(refused.isError).toBe(true);
      expect((await t.get(`/v1/domains/${domain.id}`)).status).toBe(200);
      const deleted = await c.callTool({ name: 'deleteDomain', arguments: { domain: domain.id, confirm: domain.id } });
      expect(deleted.isError, JSON.stringify(deleted.content)).toBeFalsy();
      expect((await t.get(`/v1/domains/${domain.id}`)).status).toBe(404);
    } finally {
      await c.close();
      child.kill('SIGTERM');
    }
  });
});
