import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createTestApp, eventually, OPERATOR_TOKEN, type TestApp } from '../helpers/app.js';

/**
 * README.md's "A first walk-through" and the getting-started guide's "The whole tour", each run
 * as written on a server of its own: every `curl` of its shell blocks is sent
 * (by a small reader of curl's arguments) to a real server, and the status each `# → NNN` line
 * promises is checked. The ids the README abbreviates (`acc_01m7...`, `site_...`) and the
 * token it shortens (`berth_L1WAH4...`) stand for what the earlier answers returned; work that
 * answers 202 is waited for, as a person would. So the walk-through cannot drift from the API.
 */
/** Each document's walk-through: from its heading to the next heading of its level (or the end). */
const WALKS = [
  { file: 'README.md', heading: '## A first walk-through', curls: 8 },
  { file: 'docs/Guides/getting-started.md', heading: '## The whole tour', curls: 20 },
];

interface Step {
  command: string;
  status?: number;
  line: number;
}

/** The section's shell commands, continuation lines joined, each with the status promised after it. */
function steps(text: string, heading: string): Step[] {
  const start = text.indexOf(heading);
  if (start < 0) throw new Error(`no section ${heading}`);
  const end = text.indexOf('\n## ', start + heading.length);
  const section = text.slice(start, end < 0 ? undefined : end);
  const offset = text.slice(0, start).split('\n').length;
  const out: Step[] = [];
  const lines = section.split('\n');
  let inBlock = false;
  for (let i = 0; i < lines.length; i++) {
    let text = lines[i] as string;
    if (text.startsWith('```')) {
      inBlock = text === '```sh' ? !inBlock : false;
      continue;
    }
    if (!inBlock || text.trim() === '') continue;
    const promised = /^# → (\d{3})/.exec(text);
    if (promised) {
      const last = out.at(-1);
      if (last) last.status = Number(promised[1]);
      continue;
    }
    if (text.startsWith('#')) continue;
    const line = offset + i;
    // A continued line, or a quoted string that goes on over the next line (as in the plan's JSON).
    const open = () => (text.match(/'/g) ?? []).length % 2 === 1;
    while (text.endsWith('\\') || open())
      text = text.endsWith('\\') ? text.slice(0, -1) + ' ' + (lines[++i] as string).trim() : text + '\n' + (lines[++i] as string);
    out.push({ command: text, line });
  }
  return out;
}

/** Shell words: '…' literal, "…" and bare words with $NAME expanded; a trailing `# comment` dropped. */
function words(command: string, vars: Record<string, string>): string[] {
  const out: string[] = [];
  const expand = (s: string) => s.replace(/\$([A-Z_]+)/g, (_m, name: string) => vars[name] ?? '');
  let current: string | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unbalanced quote in: ${command}`);
      current = (current ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      let s = '';
      for (; command[j] !== '"'; j++) {
        if (j >= command.length) throw new Error(`unbalanced quote in: ${command}`);
        if (command[j] === '\\') j++;
        s += command[j];
      }
      current = (current ?? '') + expand(s);
      i = j;
    } else if (/\s/.test(c)) {
      if (current !== null) out.push(current);
      current = null;
    } else if (c === '#' && current === null) break;
    else {
      const m = /^[^\s'"]+/.exec(command.slice(i)) as RegExpExecArray;
      current = (current ?? '') + expand(m[0]);
      i += m[0].length - 1;
    }
  }
  if (current !== null) out.push(current);
  return out;
}

let t: TestApp;
let base: string;
let cwd: string;
beforeEach(async () => {
  t = await createTestApp({ deps: { webhookLookup: async () => [{ address: '93.184.216.34', family: 4 }] } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  cwd = mkdtempSync(path.join(tmpdir(), 'berth-walkthrough-'));
  mkdirSync(path.join(cwd, 'public'));
  writeFileSync(path.join(cwd, 'public', 'index.html'), '<h1>Bücher</h1>');
});
afterEach(async () => {
  await t.close();
  rmSync(cwd, { recursive: true, force: true });
});

it.each(WALKS)('$file "$heading" runs as written, each answer the status it promises', async ({ file, heading, curls }) => {
  const vars: Record<string, string> = { B: base, OP: OPERATOR_TOKEN };
  const ids: Record<string, string> = {};
  let secret = '';
  const list = steps(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'), heading);
  expect(list.filter((s) => s.command.startsWith('curl')).length).toBeGreaterThan(curls);
  for (const step of list) {
    const where = `${file}:${step.line}: ${step.command.slice(0, 120)}`;
    const command = step.command
      .replace(/\bberth_L1WAH4\.\.\./g, () => secret)
      .replace(/\b([a-z]{2,4})_(?:01m7)?\.\.\./g, (m, prefix: string) => {
        if (!ids[prefix]) throw new Error(`${where}: ${m} names nothing created before it`);
        return ids[prefix];
      });
    const assignment = /^([A-Z_]+)=(\S+)/.exec(command);
    if (assignment) {
      if (!((assignment[1] as string) in vars)) vars[assignment[1] as string] = assignment[2] as string;
      continue;
    }
    const argv = words(command, vars);
    if (argv[0] !== 'curl') {
      await promisify(execFile)(argv[0] as string, argv.slice(1), { cwd });
      continue;
    }
    let method: string | undefined;
    let url = '';
    let body: Uint8Array<ArrayBuffer> | string | undefined;
    let output: string | undefined;
    const headers: Record<string, string> = {};
    for (let i = 1; i < argv.length; i++) {
      const a = argv[i] as string;
      if (a === '-X') method = argv[++i];
      else if (a === '-H') {
        const [k, ...v] = (argv[++i] as string).split(':');
        headers[(k as string).toLowerCase()] = v.join(':').trim();
      } else if (a === '-d') body = argv[++i];
      else if (a === '--data-binary')
        body = Uint8Array.from(readFileSync(path.join(cwd, (argv[++i] as string).replace(/^@/, ''))));
      else if (a === '-o') output = argv[++i];
      else if (a.startsWith('http')) url = a;
      else if (!['-s', '-i'].includes(a)) throw new Error(`${where}: curl option ${a} is not understood here`);
    }
    if (body !== undefined) headers['content-type'] ??= 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method: method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
    const raw = Buffer.from(await res.arrayBuffer());
    if (output) writeFileSync(path.join(cwd, output), raw);
    if (step.status !== undefined) expect(res.status, `${where}\n${raw.toString().slice(0, 400)}`).toBe(step.status);
    else expect(res.status, `${where}\n${raw.toString().slice(0, 400)}`).toBeLessThan(300);
    if (!res.headers.get('content-type')?.includes('json')) continue;
    const json = JSON.parse(raw.toString()) as { id?: string; secret?: string; operation?: { id: string } };
    if (json.id) ids[json.id.slice(0, json.id.lastIndexOf('_'))] = json.id;
    if (json.secret?.startsWith('berth_')) secret = json.secret;
    if (json.operation && res.status === 202) {
      ids.op = json.operation.id;
      // As a person would: the next step starts once the work is done.
      await eventually(async () => {
        const op = await t.get(`/v1/operations/${json.operation!.id}`);
        return ['succeeded', 'failed', 'canceled'].includes(op.body.status as string) ? op.body : null;
      });
    }
  }
  expect(statSync(path.join(cwd, 'backup.tar.gz')).size).toBeGreaterThan(0);
});
