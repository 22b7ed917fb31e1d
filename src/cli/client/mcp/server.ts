import { BerthError, type Berth } from '@berth/sdk';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ToolDef } from './tools.js';

/** How long a call answered 202 waits for its operation before it answers with the operation as it is. */
const OPERATION_WAIT_MS = 120_000;

const text = (value: unknown): CallToolResult['content'] => [
  { type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value, null, 2) },
];

/** A problem as a tool's result (never a protocol error): its code and detail, and its field errors. */
function problem(err: unknown): CallToolResult {
  if (err instanceof BerthError) {
    const body = { status: err.status, code: err.code, detail: err.detail, errors: err.errors };
    return { isError: true, content: text(`${err.code}: ${err.detail}`), structuredContent: body };
  }
  return { isError: true, content: text(err instanceof Error ? err.message : String(err)) };
}

/**
 * The MCP server of `berth mcp`: each tool calls its operation through the SDK with the token it
 * was started with. A destructive tool needs `confirm` equal to the resource's id; a 202 waits
 * for its operation, telling its progress to a client that asked for it.
 */
export function mcpServer(tools: ToolDef[], berth: () => Berth, version: string): Server {
  const server = new Server({ name: 'berth', version }, { capabilities: { tools: {} } });
  const byName = new Map(tools.map((t) => [t.name, t]));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map(({ name, description, inputSchema, annotations }) => ({ name, description, inputSchema, annotations })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool)
      return { isError: true, content: text(`no tool ${request.params.name} is served (see --toolsets, --allow-writes)`) };
    const args = request.params.arguments ?? {};
    if (tool.confirms && args.confirm !== args[tool.confirms])
      return {
        isError: true,
        content: text(
          `${tool.name} changes or removes what exists: pass confirm equal to ${tool.confirms} (${String(args[tool.confirms])}).`,
        ),
      };
    const params: Record<'path' | 'query', Record<string, unknown>> = { path: {}, query: {} };
    for (const p of tool.params) if (args[p.name] !== undefined) params[p.in][p.name] = args[p.name];
    try {
      const request_ = berth().request as unknown as (
        method: string,
        path: string,
        init: Record<string, unknown>,
      ) => Promise<{ data?: unknown; response: Response }>;
      const { data, response } = await request_(tool.method, tool.path, {
        params,
        ...(tool.body ? { body: args.body } : {}),
      });
      if (response.status === 204) return { content: text('done') };
      const operation = (data as { operation?: { id?: string } } | undefined)?.operation?.id;
      if (response.status === 202 && operation) return await waited(operation, extra);
      return {
        content: text(data),
        ...(data && typeof data === 'object' ? { structuredContent: data as Record<string, unknown> } : {}),
      };
    } catch (err) {
      return problem(err);
    }
  });

  /** The operation followed until it ends (or OPERATION_WAIT_MS), each change of its progress notified. */
  async function waited(
    id: string,
    extra: { _meta?: { progressToken?: string | number }; sendNotification: (n: never) => Promise<void>; signal: AbortSignal },
  ): Promise<CallToolResult> {
    const token = extra._meta?.progressToken;
    let last = -1;
    for (const until = Date.now() + OPERATION_WAIT_MS; ; await new Promise((r) => setTimeout(r, 500))) {
      const { data } = await berth().GET('/v1/operations/{operation_id}', { params: { path: { operation_id: id } } });
      const op = data as { status: string; progress: number; error: unknown };
      if (token !== undefined && op.progress !== last) {
        last = op.progress;
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: op.progress, total: 100, message: op.status },
        } as never);
      }
      if (op.status === 'failed' || op.status === 'canceled')
        return { isError: true, content: text(op), structuredContent: op as unknown as Record<string, unknown> };
      if (op.status === 'succeeded' || Date.now() > until || extra.signal.aborted)
        return { content: text(op), structuredContent: op as unknown as Record<string, unknown> };
    }
  }

  return server;
}
