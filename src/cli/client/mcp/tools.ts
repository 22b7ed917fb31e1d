import { type OperationDoc, operations, type Schema } from '../document.js';

/** What a tool does, as MCP annotates it. */
interface Annotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** One operation of the API as a tool: its name, input schema and annotations, and how to call it. */
export interface ToolDef {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: Annotations;
  method: string;
  path: string;
  toolset: string;
  /** Its path and query parameters, by name. */
  params: { name: string; in: 'path' | 'query' }[];
  /** Whether it takes a JSON body (the `body` argument). */
  body: boolean;
  /** A destructive tool's `confirm` must equal this path parameter's value (the resource's id). */
  confirms?: string;
}

export interface ToolOptions {
  toolsets: string[];
  allowWrites: boolean;
  allowDestructive: boolean;
}

/**
 * The toolsets served unless `--toolsets` says otherwise: what an assistant needs most, under 40
 * tools; `events` lets it follow what happens (`listEvents` with `after` and `wait`).
 */
export const DEFAULT_TOOLSETS = ['accounts', 'domains', 'dns', 'sites', 'emails', 'operations', 'events'];

/** MCP's rule for tool names; an operation whose id breaks it is left out rather than break a client's whole list. */
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Writes that overwrite or take away what exists: deletions, replacements, syncs, imports, restores. */
const DESTRUCTIVE = /^(delete|replace|sync|import|restore|terminate)/;

/**
 * A schema with its references to the document's components copied in as `$defs` (only those
 * it reaches): a tool's input schema stands on its own.
 */
function standalone(schema: Schema, components: Record<string, Schema>): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (!value || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
        const name = v.slice('#/components/schemas/'.length);
        out.$ref = `#/$defs/${name}`;
        if (!(name in defs)) {
          defs[name] = {};
          defs[name] = rewrite(components[name]);
        }
      } else if (k !== 'example' && k !== 'examples') out[k] = rewrite(v);
    }
    return out;
  };
  const root = rewrite(schema) as Record<string, unknown>;
  return Object.keys(defs).length ? { ...root, $defs: defs } : root;
}

function toolOf(op: OperationDoc & { method: string; path: string }, components: Record<string, Schema>): ToolDef {
  const read = op.method === 'get';
  const destructive = op.method === 'delete' || DESTRUCTIVE.test(op.operationId);
  const params = (op.parameters ?? []).filter((p) => p.in === 'path' || p.in === 'query') as ToolDef['params'] &
    { description?: string; required?: boolean; schema?: Schema }[];
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const p of params) {
    properties[p.name] = { ...standalone(p.schema ?? {}, components), ...(p.description ? { description: p.description } : {}) };
    if (p.required || p.in === 'path') required.push(p.name);
  }
  const bodySchema = op.requestBody?.content['application/json']?.schema;
  if (bodySchema) {
    properties.body = standalone(bodySchema, components);
    required.push('body');
  }
  const confirms = destructive ? params.filter((p) => p.in === 'path').at(-1)?.name : undefined;
  if (confirms) {
    properties.confirm = { type: 'string', description: `Must equal \`${confirms}\`: this changes or removes what exists.` };
    required.push('confirm');
  }
  return {
    name: op.operationId,
    description: [op.summary, op.description].filter(Boolean).join('. '),
    inputSchema: { type: 'object', properties, required, additionalProperties: false },
    annotations: {
      title: op.summary ?? op.operationId,
      readOnlyHint: read,
      destructiveHint: destructive,
      idempotentHint: read || op.method === 'put' || op.method === 'delete',
      openWorldHint: false,
    },
    method: op.method,
    path: op.path,
    toolset: op.tags?.[0] ?? 'other',
    params: params.map(({ name, in: where }) => ({ name, in: where })),
    body: Boolean(bodySchema),
    ...(confirms ? { confirms } : {}),
  };
}

/** The tools served: the operations of the toolsets asked for, reads only unless writes (and destructive ones) are allowed. */
export function buildTools(o: ToolOptions): ToolDef[] {
  const { ops, components } = operations();
  return (
    ops
      // A body that is not JSON (an archive, a zone file) is no tool argument.
      .filter((op) => NAME.test(op.operationId) && (!op.requestBody || op.requestBody.content['application/json']))
      .map((op) => toolOf(op, components))
      .filter((t) => o.toolsets.includes(t.toolset))
      .filter((t) => t.annotations.readOnlyHint || (o.allowWrites && (!t.annotations.destructiveHint || o.allowDestructive)))
  );
}
