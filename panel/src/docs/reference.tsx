import { useMemo, useState } from 'react';
import { useHash } from '../hash.js';
import { Markdown } from './markdown.js';
import { SchemaView, typeName, type Components, type Schema } from './schema.js';

interface Parameter {
  $ref?: string;
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}
interface Content {
  schema?: Schema;
  example?: unknown;
}
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  deprecated?: boolean;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, Content> };
  responses?: Record<string, { description?: string; content?: Record<string, Content> }>;
  'x-required-scope'?: string;
}
export interface Document {
  info: { title: string; version: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Components; parameters?: Record<string, Parameter> };
}
interface Entry {
  id: string;
  method: string;
  path: string;
  op: Operation;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation once, by tag in the document's order, each with an anchor of its own. */
function entriesByTag(doc: Document): [string, Entry[]][] {
  const byTag = new Map<string, Entry[]>((doc.tags ?? []).map((t) => [t.name, []]));
  for (const [path, item] of Object.entries(doc.paths))
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const entry = { id: op.operationId ?? `${method}-${path}`, method, path, op };
      const tag = op.tags?.[0] ?? 'other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), entry]);
    }
  return [...byTag].filter(([, entries]) => entries.length > 0);
}

/**
 * The API reference: every operation listed by tag, one shown at a time, its schemas opened on
 * demand. The document is read once; nothing is rendered for an operation nobody opened.
 */
export function Reference({ doc }: { doc: Document }) {
  const tags = useMemo(() => entriesByTag(doc), [doc]);
  const [filter, setFilter] = useState('');
  // The operation named by the fragment (`#/operations/createAccount`).
  const selected = /^#\/operations\/(.+)$/.exec(useHash())?.[1] ?? null;
  const entry = tags.flatMap(([, entries]) => entries).find((e) => e.id === selected);
  const wanted = filter.toLowerCase();
  const shown = (e: Entry) => !wanted || `${e.method} ${e.path} ${e.op.summary ?? ''} ${e.id}`.toLowerCase().includes(wanted);

  return (
    <div className="reference">
      <nav aria-label="Operations">
        <a href="#/" className="brand">
          {doc.info.title} <span className="version">{doc.info.version}</span>
        </a>
        <label htmlFor="filter">Filter operations</label>
        <input id="filter" type="search" value={filter} onChange={(e) => setFilter(e.target.value)} />
        {tags.map(([tag, entries]) => {
          const visible = entries.filter(shown);
          return visible.length === 0 ? null : (
            <section key={tag} aria-label={tag}>
              <h2>{tag}</h2>
              <ul>
                {visible.map((e) => (
                  <li key={e.id}>
                    <a href={`#/operations/${e.id}`} aria-current={e.id === selected ? 'page' : undefined}>
                      <span className={`method ${e.method}`}>{e.method.toUpperCase()}</span> {e.op.summary ?? e.path}
                    </a>
                  </li>
                ))}
              </ul>
            </section>
          );
        })}
      </nav>
      <main>{entry ? <OperationView entry={entry} doc={doc} /> : <Intro doc={doc} />}</main>
    </div>
  );
}

function Intro({ doc }: { doc: Document }) {
  return (
    <article>
      <h1>{doc.info.title}</h1>
      <p>
        Version {doc.info.version}. The document itself: <a href="/v1/openapi.json">/v1/openapi.json</a>.
      </p>
      <Markdown text={doc.info.description} />
    </article>
  );
}

const json = (v: unknown) => JSON.stringify(v, null, 2);

function OperationView({ entry, doc }: { entry: Entry; doc: Document }) {
  const { op, method, path } = entry;
  const components = doc.components.schemas;
  const parameters = (op.parameters ?? []).map((p) =>
    p.$ref ? (doc.components.parameters?.[p.$ref.replace('#/components/parameters/', '')] ?? p) : p,
  );
  const body = Object.entries(op.requestBody?.content ?? {})[0];
  const responses = Object.entries(op.responses ?? {});
  return (
    <article aria-labelledby="operation-title">
      <h1 id="operation-title">{op.summary ?? entry.id}</h1>
      <p className="endpoint">
        <span className={`method ${method}`}>{method.toUpperCase()}</span> <code>{path}</code>
      </p>
      <p>
        Operation <code>{entry.id}</code>
        {op['x-required-scope'] && (
          <>
            {' '}
            · scope <code>{op['x-required-scope']}</code>
          </>
        )}
        {op.deprecated && ' · deprecated'}
      </p>
      <Markdown text={op.description} />

      {parameters.length > 0 && (
        <section aria-labelledby="parameters">
          <h2 id="parameters">Parameters</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">In</th>
                <th scope="col">Type</th>
                <th scope="col">Description</th>
              </tr>
            </thead>
            <tbody>
              {parameters.map((p) => (
                <tr key={`${p.in}-${p.name}`}>
                  <td>
                    <code>{p.name}</code>
                    {p.required && <span className="required"> required</span>}
                  </td>
                  <td>{p.in}</td>
                  <td>{p.schema ? typeName(p.schema, components) : ''}</td>
                  <td>
                    <Markdown text={p.description ?? p.schema?.description} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}

      {body && (
        <section aria-labelledby="body">
          <h2 id="body">
            Body <code>{body[0]}</code>
            {op.requestBody?.required && <span className="required"> required</span>}
          </h2>
          {body[1].schema && <SchemaView schema={body[1].schema} components={components} />}
          {body[1].example !== undefined && (
            <details>
              <summary>Example</summary>
              <pre>{json(body[1].example)}</pre>
            </details>
          )}
        </section>
      )}

      <section aria-labelledby="responses">
        <h2 id="responses">Responses</h2>
        {responses.map(([status, response]) => {
          const [type, content] = Object.entries(response.content ?? {})[0] ?? [];
          const success = status.startsWith('2');
          return (
            <details key={status} open={success}>
              <summary>
                <strong>{status}</strong> {response.description} {type && <code>{type}</code>}
              </summary>
              {success && content?.schema && <SchemaView schema={content.schema} components={components} />}
              {content?.example !== undefined && <pre>{json(content.example)}</pre>}
            </details>
          );
        })}
      </section>
    </article>
  );
}
