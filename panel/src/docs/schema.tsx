import { Markdown } from './markdown.js';

/** The parts of a JSON Schema (OpenAPI 3.1) the reference shows. */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
}

export type Components = Record<string, Schema>;

/** A `$ref` to a component followed, once; what it names is shown as the type's name. */
export const resolve = (s: Schema, components: Components): Schema =>
  s.$ref ? (components[s.$ref.replace('#/components/schemas/', '')] ?? {}) : s;

/** A one-line type: `string`, `integer | null`, `array of Record`, `Account`. */
export function typeName(s: Schema, components: Components): string {
  if (s.$ref) return s.$ref.replace('#/components/schemas/', '');
  const variants = s.anyOf ?? s.oneOf;
  if (variants) return variants.map((v) => typeName(v, components)).join(' | ');
  if (s.allOf) return s.allOf.map((v) => typeName(v, components)).join(' & ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  return (
    types.map((t) => (t === 'array' && s.items ? `array of ${typeName(s.items, components)}` : t)).join(' | ') ||
    (s.properties ? 'object' : 'any')
  );
}

/** Limits and choices in words: what a client is refused for. */
function constraints(s: Schema, components: Components): string[] {
  const out: string[] = [];
  if (s.items) out.push(...constraints(resolve(s.items, components), components).map((c) => `each ${c}`));
  if (s.enum) out.push(`one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  if (s.format) out.push(`format ${s.format}`);
  if (s.pattern) out.push(`pattern ${s.pattern}`);
  if (s.minLength !== undefined && s.minLength === s.maxLength) out.push(`length ${s.minLength}`);
  else if (s.minLength !== undefined || s.maxLength !== undefined) out.push(`length ${s.minLength ?? 0}–${s.maxLength ?? '∞'}`);
  if (s.minimum !== undefined || s.maximum !== undefined) out.push(`from ${s.minimum ?? '−∞'} to ${s.maximum ?? '∞'}`);
  if (s.default !== undefined) out.push(`default ${JSON.stringify(s.default)}`);
  return out;
}

/** The members an object schema has, once its `$ref`, `allOf` and nullable variants are seen through. */
function members(s: Schema, components: Components): { properties: Record<string, Schema>; required: string[] } | null {
  const r = resolve(s, components);
  if (r.properties) return { properties: r.properties, required: r.required ?? [] };
  const parts = r.allOf ?? (r.anyOf ?? r.oneOf)?.filter((v) => v.type !== 'null');
  if (parts?.length === 1 || r.allOf) {
    const found = (parts ?? []).map((p) => members(p, components)).filter((m) => m !== null);
    if (found.length)
      return {
        properties: Object.assign({}, ...found.map((m) => m.properties)) as Record<string, Schema>,
        required: found.flatMap((m) => m.required),
      };
  }
  if (r.items) return members(r.items, components);
  return null;
}

/**
 * An object's members, one row each: name, type, whether required, description and limits.
 * Nested objects open on demand (`<details>`), so a large schema costs nothing until it is read.
 */
export function SchemaView({ schema, components, depth = 0 }: { schema: Schema; components: Components; depth?: number }) {
  const m = members(schema, components);
  if (!m || depth > 6) return <Markdown text={resolve(schema, components).description} />;
  return (
    <dl className="schema">
      {Object.entries(m.properties).map(([name, member]) => {
        const nested = members(member, components);
        const r = resolve(member, components);
        return (
          <div key={name}>
            <dt>
              <code>{name}</code> <span className="type">{typeName(member, components)}</span>
              {m.required.includes(name) && <span className="required"> required</span>}
            </dt>
            <dd>
              <Markdown text={member.description ?? r.description} />
              {constraints(r, components).map((c) => (
                <div key={c} className="constraint">
                  {c}
                </div>
              ))}
              {nested && (
                <details>
                  <summary>Members of {name}</summary>
                  <SchemaView schema={member} components={components} depth={depth + 1} />
                </details>
              )}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}
