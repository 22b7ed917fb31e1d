import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { Command, Option } from 'commander';
import { operations } from '../document.js';
import type { Runtime } from '../runtime.js';
import { buildTools, DEFAULT_TOOLSETS } from './tools.js';

const body = async (req: IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
};

/**
 * `berth mcp`: the API as Model Context Protocol tools, over stdio (the default) or, with
 * `--http`, Streamable HTTP on 127.0.0.1 (one session per client). The token is the CLI's
 * (its context, or BERTH_URL/BERTH_TOKEN), never a tool's argument.
 */
export function mcpCommand(rt: Runtime): Command {
  return new Command('mcp')
    .description('Serve the API to AI assistants as MCP tools (stdio, or --http)')
    .option(
      '--toolsets <names>',
      `comma-separated API tags to serve (default ${DEFAULT_TOOLSETS.join(',')}; "all" for every one)`,
    )
    .option('--allow-writes', 'serve the operations that change things too (reads only otherwise)')
    .option(
      '--allow-destructive',
      'with --allow-writes: serve deletions, replacements, syncs, imports and restores, each needing confirm',
    )
    .addOption(new Option('--http <port>', 'serve Streamable HTTP on 127.0.0.1:<port> (0: any free port, printed on stderr)'))
    .action(async (o: { toolsets?: string; allowWrites?: boolean; allowDestructive?: boolean; http?: string }) => {
      const { ops, version } = operations();
      const toolsets =
        o.toolsets === 'all'
          ? [...new Set(ops.map((op) => op.tags?.[0] ?? 'other'))]
          : (o.toolsets?.split(',') ?? DEFAULT_TOOLSETS);
      const tools = buildTools({ toolsets, allowWrites: Boolean(o.allowWrites), allowDestructive: Boolean(o.allowDestructive) });
      // Loaded here, not with every other command: the MCP SDK and its schemas take a while.
      const { mcpServer } = await import('./server.js');
      const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
      const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
      const { isInitializeRequest } = await import('@modelcontextprotocol/sdk/types.js');
      const server = () => mcpServer(tools, () => rt.berth(), version);
      rt.berth(); // the target and token now: a missing one is a usage error before any client connects
      if (o.http === undefined) {
        const s = server();
        await s.connect(new StdioServerTransport());
        await new Promise<void>((resolve) => (s.onclose = resolve));
        return;
      }
      const sessions = new Map<string, InstanceType<typeof StreamableHTTPServerTransport>>();
      const http = createServer((req, res) => {
        void (async () => {
          const id = req.headers['mcp-session-id'];
          const parsed = req.method === 'POST' ? await body(req) : undefined;
          let transport = typeof id === 'string' ? sessions.get(id) : undefined;
          if (!transport && req.method === 'POST' && isInitializeRequest(parsed)) {
            const created = new StreamableHTTPServerTransport({
              sessionIdGenerator: () => randomUUID(),
              onsessioninitialized: (sid) => void sessions.set(sid, created),
            });
            created.onclose = () => created.sessionId && sessions.delete(created.sessionId);
            await server().connect(created);
            transport = created;
          }
          if (!transport) {
            res.writeHead(400, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no such session' }, id: null }));
            return;
          }
          await transport.handleRequest(req, res, parsed);
        })().catch((err: unknown) => {
          if (!res.headersSent) res.writeHead(500).end(err instanceof Error ? err.message : 'error');
        });
      });
      await new Promise<void>((resolve) => http.listen(Number(o.http), '127.0.0.1', resolve));
      const address = http.address();
      rt.say(
        `berth mcp: Streamable HTTP on http://127.0.0.1:${typeof address === 'object' && address ? address.port : o.http}/mcp`,
      );
      await new Promise<void>((resolve) => {
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => http.close(() => resolve()));
      });
    });
}
