import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { answersPage, operation, resolve, type Parameter, type Schema } from './document.js';
import { UsageError } from './errors.js';
import type { ResourceDef } from './resources.js';
import type { Runtime } from './runtime.js';

/** `site_id` → `site`, `generate_password` → `generate-password`: flags read like the API's fields. */
const flagName = (field: string) => field.replace(/_id$/, '').replaceAll('_', '-');
const firstSentence = (text = '') => /^[^\n]*?[.!?](?=\s|$)/.exec(text)?.[0] ?? text.split('\n')[0] ?? '';

const typeOf = (s: Schema | undefined): string | undefined => {
  const t = resolve(s)?.type;
  return Array.isArray(t) ? t.find((x) => x !== 'null') : t;
};
const nullable = (s: Schema | undefined) => Array.isArray(resolve(s)?.type) && (resolve(s)?.type as string[]).includes('null');

/** Turns a flag's text into the JSON value its schema wants; a wrong one is a usage error (exit 2). */
function parserFor(schema: Schema | undefined): ((value: string, previous: unknown) => unknown) | undefined {
  const type = typeOf(schema);
  const orNull = (parse: (v: string) => unknown) => (v: string) => (nullable(schema) && v === 'null' ? null : parse(v));
  const json = (v: string) => {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      throw new InvalidArgumentError('not valid JSON.');
    }
  };
  if (type === 'integer' || type === 'number')
    return orNull((v) => {
      const n = Number(v);
      if (v.trim() === '' || Number.isNaN(n)) throw new InvalidArgumentError('not a number.');
      return n;
    });
  if (type === 'array') {
    const itemType = typeOf(resolve(schema)?.items);
    if (itemType === 'object' || itemType === 'array') return orNull(json);
    const item = parserFor(resolve(schema)?.items) ?? ((v: string) => v);
    // Repeatable and comma-separated: `--destinations a@x.org,b@x.org` or the flag twice.
    return (v, previous): unknown[] => [
      ...(Array.isArray(previous) ? (previous as unknown[]) : []),
      ...v
        .split(',')
        .filter(Boolean)
        .map((x) => item(x.trim(), undefined)),
    ];
  }
  if (type === 'object') return orNull(json);
  if (type === 'string') return orNull((v) => v);
  return undefined;
}

/** `--data '{"...": ...}'` or `--data @body.json`: the body to start from, flags merged over it. */
function readData(value: string | undefined): Record<string, unknown> {
  if (value === undefined) return {};
  const text = value.startsWith('@') ? readFileSync(value.slice(1), 'utf8') : value;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  throw new UsageError('--data must be a JSON object (or @file holding one)');
}

interface Binding {
  attribute: string;
  to: 'path' | 'query' | 'header' | 'body';
  name: string;
}

/** One verb of a resource: an operation of the document, its flags made from its parameters and body. */
function operationCommand(def: ResourceDef, verb: string, key: string, rt: Runtime): Command {
  const op = operation(key);
  const cmd = new Command(verb).description(op.summary ?? verb);
  if (op.description) cmd.addHelpText('after', `\n${op.description}`);
  const bindings: Binding[] = [];
  const bind = (option: Option, to: Binding['to'], name: string) => {
    cmd.addOption(option);
    bindings.push({ attribute: option.attributeName(), to, name });
  };

  // The resource itself is the positional argument (`berth domains get example.com`), its
  // parents are flags (`berth records get rec_... --domain example.com`); the flag of the
  // resource itself is accepted too.
  const pathParams = [...key.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  const positional = pathParams.find((p) => !def.parents?.includes(p));
  const ownFlag = positional ? new Option(`--${flagName(positional)} <id>`, 'the same, as a flag') : undefined;
  if (positional && ownFlag) {
    cmd.argument(
      `[${flagName(positional)}]`,
      `the ${flagName(positional)} (its id${positional.endsWith('_id') ? '' : ' or name'})`,
    );
    cmd.addOption(ownFlag);
  }
  for (const p of pathParams.filter((x) => x !== positional))
    bind(new Option(`--${flagName(p)} <id>`, `the ${flagName(p)} (id or name)`).makeOptionMandatory(), 'path', p);

  const list = answersPage(op);
  for (const p of op.parameters as Parameter[]) {
    if (p.in === 'path' || p.name === 'cursor' || p.name === 'If-None-Match') continue;
    if (p.in === 'query' && p.name === 'limit' && list) continue;
    const flag = p.in === 'header' ? p.name.toLowerCase() : flagName(p.name);
    const type = typeOf(p.schema);
    const option =
      type === 'boolean'
        ? new Option(`--${flag}`, firstSentence(p.description))
        : new Option(`--${flag} <value>`, firstSentence(p.description)).argParser(
            parserFor(p.schema) as (v: string, prev: unknown) => unknown,
          );
    bind(option, p.in === 'header' ? 'header' : 'query', p.name);
  }
  if (list) {
    cmd.option('--limit <n>', 'how many to show at most (every page is fetched as needed)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a positive integer.');
      return n;
    });
    cmd.option('--all', 'every one, page after page');
  }

  const body = resolve(op.requestBody?.content['application/json']?.schema);
  if (body) {
    cmd.option('--data <json>', 'the JSON body (or @file), the flags below merged over it');
    for (const [field, schema] of Object.entries(body.properties ?? {})) {
      if (resolve(schema)?.readOnly) continue;
      const description = firstSentence(resolve(schema)?.description) + (body.required?.includes(field) ? ' (required)' : '');
      if (typeOf(schema) === 'boolean') {
        bind(new Option(`--${flagName(field)}`, description), 'body', field);
        cmd.addOption(new Option(`--no-${flagName(field)}`, `${field}: false`)); // the same attribute, bound above
      } else {
        const parse = parserFor(schema);
        const option = new Option(`--${flagName(field)} <value>`, description);
        bind(parse ? option.argParser(parse) : option, 'body', field);
      }
    }
  }
  if (op.method === 'delete') cmd.option('-y, --yes', 'do not ask for confirmation');
  if (op.method !== 'get') cmd.option('--wait', 'wait until the operation the answer names has finished, and show it');

  cmd.action(async (...args: unknown[]) => {
    const opts = cmd.opts<Record<string, unknown>>();
    const parts: Record<Binding['to'], Record<string, unknown>> = { path: {}, query: {}, header: {}, body: {} };
    const target =
      (args[0] as string | undefined) ?? (ownFlag ? (opts[ownFlag.attributeName()] as string | undefined) : undefined);
    if (positional) {
      if (target === undefined)
        throw new UsageError(`give the ${flagName(positional)} as an argument or --${flagName(positional)}`);
      parts.path[positional] = target;
    }
    for (const b of bindings) if (opts[b.attribute] !== undefined) parts[b.to][b.name] = opts[b.attribute];
    const berth = rt.berth();
    if (list) {
      const limit = opts.all ? Infinity : ((opts.limit as number | undefined) ?? 50);
      const items: unknown[] = [];
      const query = { ...parts.query, ...(Number.isFinite(limit) ? { limit: Math.min(limit, 200) } : {}) };
      for await (const item of berth.list(op.path as never, { query, path: parts.path })) {
        items.push(item);
        if (items.length >= limit) break;
      }
      rt.print(items, def.columns);
      return;
    }
    if (op.method === 'delete' && !(await rt.confirm(`Delete ${def.name} ${String(target)}?`, opts.yes as boolean)))
      throw new UsageError('not confirmed; nothing was deleted');
    const request = berth.request as unknown as (
      method: string,
      path: string,
      init: Record<string, unknown>,
    ) => Promise<{ data?: unknown; response: Response }>;
    const { data, response } = await request(op.method, op.path, {
      params: { path: parts.path, query: parts.query },
      headers: parts.header,
      ...(body ? { body: { ...readData(opts.data as string | undefined), ...parts.body } } : {}),
    });
    const operationId = (data as { operation?: { id?: string } } | undefined)?.operation?.id;
    if (opts.wait && operationId) {
      rt.print(await berth.operations.wait(operationId), ['id', 'type', 'status']);
      return;
    }
    if (response.status === 204) rt.say(`${op.summary ?? verb}: done.`);
    else rt.print(data, def.columns);
  });
  return cmd;
}

export function resourceCommand(def: ResourceDef, rt: Runtime): Command {
  const cmd = new Command(def.name).description(def.about);
  for (const [verb, key] of Object.entries(def.verbs)) cmd.addCommand(operationCommand(def, verb, key, rt));
  return cmd;
}
