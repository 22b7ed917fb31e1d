import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../scripts/build-cli.js';
import { operation } from '../../src/cli/client/document.js';
import { RESOURCES } from '../../src/cli/client/resources.js';
import { inSlices } from '../../src/lib/slices.js';
import { createTestApp, eventually, OPERATOR_TOKEN, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';

/**
 * the `berth` CLI, each command run as a subprocess against a real server listening on a port;
 * JSON output parsed and asserted. The commands run the compiled CLI (dist/berth.mjs, built here
 * from the sources under test, as `npm ci` builds it); tests of `bin/berth.mjs` itself, the entry
 * point `npm install` links, check it runs the bundle, fast, and the source when the bundle is stale.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = path.join(ROOT, 'bin', 'berth.mjs');
const BIN = path.join(ROOT, 'dist', 'berth.mjs');
let t: TestApp;
let baseUrl: string;
let home: string;
const unique = (p: string) => `${p}${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs `berth ...args`; the test's own server answers meanwhile (the call is asynchronous). */
function berth(args: string[], env: Record<string, string> = {}, cwd = home): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd,
        env: { PATH: process.env.PATH ?? '', HOME: home, BERTH_CONFIG: path.join(home, 'berth.json'), ...env },
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr, json });
      },
    );
  });
}
/** As the operator, through BERTH_URL and BERTH_TOKEN. */
const asOperator = (args: string[]) => berth(args, { BERTH_URL: baseUrl, BERTH_TOKEN: OPERATOR_TOKEN });
/** As the operator, expecting success. */
const ok = async (args: string[]) => {
  const r = await asOperator(args);
  if (r.code !== 0) throw new Error(`berth ${args.join(' ')} → ${r.code}\n${r.stderr}`);
  return r;
};

beforeAll(async () => {
  await buildCli(path.dirname(BIN));
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  home = mkdtempSync(path.join(tmpdir(), 'berth-cli-'));
});
afterAll(async () => {
  await t.close();
  rmSync(home, { recursive: true, force: true });
});

describe('bin/berth.mjs', () => {
  const help = () =>
    new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile(process.execPath, [ENTRY, '--help'], { env: { PATH: process.env.PATH ?? '', HOME: home } }, (err, stdout) =>
        resolve({ code: err ? 1 : 0, stdout }),
      ),
    );

  it('spends under 300 ms of its own before its first request, or three times node alone on a busier machine (the compiled CLI, the document read once)', async () => {
    let started = 0;
    let arrivals: number[] = [];
    const server = http.createServer((req, res) => {
      arrivals.push(performance.now() - started);
      res.writeHead(401, { 'content-type': 'application/problem+json' }).end('{"code":"unauthenticated","status":401}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const env = { PATH: '', HOME: home, BERTH_URL: url, BERTH_TOKEN: 'x' };
    /** The time from spawning `node args` to its first request. */
    const firstRequest = async (args: string[]) => {
      arrivals = [];
      started = performance.now();
      await new Promise((resolve) => execFile(process.execPath, args, { env }, resolve));
      expect(arrivals).toHaveLength(1);
      return arrivals[0] as number;
    };
    try {
      // Node's own start, measured in the same run, each right before the CLI's: what is left is
      // the CLI's. The least of up to seven pairs: a busy machine slows some, never all, of them.
      // The CLI's part is CPU work as node's is, and a busy machine stretches both: idle, node
      // alone took 100-125 ms and the CLI 150 ms more; beside the other suites on two cores, node
      // alone 125-870 ms and the CLI 300-500 ms more. So its bound is 300 ms, or three times node
      // alone where that is longer.
      const over: number[] = [];
      let shown = '';
      // The first pair under the bound decides (the least of seven is compared).
      for (let i = 0; i < 7 && !over.some((o) => o < 0); i++) {
        const bare = await firstRequest(['-e', `require('node:http').get(${JSON.stringify(url)}, (r) => r.resume())`]);
        const cli = await firstRequest([ENTRY, 'accounts', 'list']);
        over.push(cli - bare - Math.max(300, 3 * bare));
        if (over.at(-1) === Math.min(...over)) shown = `berth ${Math.round(cli)} ms, node alone ${Math.round(bare)} ms`;
      }
      expect(Math.min(...over), shown).toBeLessThan(0);
    } finally {
      server.close();
    }
  });

  it('runs the TypeScript source when a source is newer than the bundle', async () => {
    // A bundle built before its sources changed, which would fail if it ran.
    const bundle = readFileSync(BIN);
    writeFileSync(BIN, "throw new Error('the stale bundle ran');\n");
    utimesSync(BIN, new Date(0), new Date(0));
    try {
      const r = await help();
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/berth/);
    } finally {
      writeFileSync(BIN, bundle);
    }
  });
});

describe('contexts', () => {
  it('add, use, list and --context; the file is 0600 and holds the token; BERTH_URL/BERTH_TOKEN override', async () => {
    expect((await berth(['context', 'add', 'prod', '--url', baseUrl, '--token', OPERATOR_TOKEN])).code).toBe(0);
    expect((await berth(['context', 'add', 'broken', '--url', baseUrl, '--token', 'berth_wrong'])).code).toBe(0);
    const file = path.join(home, 'berth.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const list = await berth(['context', 'list', '-o', 'json']);
    expect(list.json).toEqual([
      { name: 'prod', url: baseUrl, current: false },
      { name: 'broken', url: baseUrl, current: true },
    ]);
    expect(list.stdout).not.toContain(OPERATOR_TOKEN);
    // The current context's token is refused: a 401, exit 1, the problem printed.
    const refused = await berth(['plans', 'list']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Unauthenticated \(401 unauthenticated\)/);
    expect((await berth(['plans', 'list', '--context', 'prod'])).code).toBe(0);
    expect((await berth(['plans', 'list'], { BERTH_TOKEN: OPERATOR_TOKEN })).code).toBe(0);
    expect((await berth(['context', 'use', 'prod'])).code).toBe(0);
    expect((await berth(['plans', 'list'])).code).toBe(0);
    expect((await berth(['plans', 'list', '--context', 'nope'])).code).toBe(2);
  });

  it('without any server configured, a usage error (2) that says how to configure one', async () => {
    const r = await berth(['plans', 'list'], { BERTH_CONFIG: path.join(home, 'none.json') });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('berth context add');
  });
});

describe('resource commands', () => {
  it('every verb names an operation of the document, and every resource lists (JSON in a pipe)', async () => {
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id);
    const domain = (await t.post('/v1/domains', { account_id: account.id, name: `${unique('d')}.com` })).body;
    const site = (await t.post('/v1/sites', { account_id: account.id, hostname: domain.name })).body;
    for (const def of RESOURCES) for (const key of Object.values(def.verbs)) expect(() => operation(key)).not.toThrow();
    const parents: Record<string, string[]> = {
      records: ['--domain', domain.name],
      deployments: ['--site', site.id],
      'cron-jobs': ['--account', account.id],
      'ssh-keys': ['--account', account.id],
    };
    // Four at a time: each is a process of its own, and the server answers them together.
    const listed = RESOURCES.filter((d) => d.verbs.list);
    await inSlices(
      listed,
      async (def) => {
        const r = await ok([def.name, 'list', ...(parents[def.name] ?? [])]);
        expect(Array.isArray(r.json), def.name).toBe(true);
      },
      4,
    );
  });

  it('the resource is the argument, by id or name, and its flag is accepted too; a parent is a flag', async () => {
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id);
    const domain = (await t.post('/v1/domains', { account_id: account.id, name: `${unique('arg')}.com` })).body;
    expect((await ok(['domains', 'get', domain.name])).json.id).toBe(domain.id);
    expect((await ok(['domains', 'get', '--domain', domain.id])).json.name).toBe(domain.name);
    const missing = await asOperator(['domains', 'get']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--domain');
    const record = (await t.post(`/v1/domains/${domain.id}/records`, { name: 'arg', type: 'A', content: '192.0.2.7' })).body;
    expect((await ok(['records', 'get', record.id, '--domain', domain.name])).json.content).toBe('192.0.2.7');
    const site = (await t.post('/v1/sites', { account_id: account.id, hostname: domain.name })).body;
    await ok(['sites', 'delete', site.id, '--yes', '--wait']);
    expect((await t.get(`/v1/sites/${site.id}`)).status).toBe(404);
  });

  it('create, get, update, delete a mailbox; a generated password is shown once; flags typed by the schema', async () => {
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id);
    const name = `${unique('mail')}.com`;
    await ok(['domains', 'create', '--account', account.id, '--name', name, '--mail-enabled']);
    const listed = await ok(['domains', 'list', '--account', account.id, '-o', 'json']);
    expect(listed.json.map((d: { name: string }) => d.name)).toEqual([name]);
    const created = await ok(['emails', 'create', '--address', `info@${name}`, '--generate-password', '--quota-mb', '100']);
    expect(created.json).toMatchObject({ address: `info@${name}`, quota_mb: 100 });
    expect(created.json.password).toMatch(/^.{24}$/);
    const id = created.json.id as string;
    expect((await ok(['emails', 'get', id])).json).not.toHaveProperty('password');
    const updated = await ok(['emails', 'update', id, '--quota-mb', '200', '--forward-to', 'a@example.org,b@example.org']);
    expect(updated.json).toMatchObject({ quota_mb: 200, forward_to: ['a@example.org', 'b@example.org'] });
    const table = await ok(['emails', 'get', id, '-o', 'table']);
    expect(table.stdout).toMatch(/^quota_mb\s+200$/m);
    // A stale If-Match: 412, exit 1.
    const stale = await asOperator(['emails', 'update', id, '--quota-mb', '300', '--if-match', '"1"']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('412 precondition_failed');
    // No terminal and no --yes: nothing is deleted.
    expect((await asOperator(['emails', 'delete', id])).code).toBe(2);
    expect((await ok(['emails', 'get', id])).json.id).toBe(id);
    await ok(['emails', 'delete', id, '--yes']);
    const gone = await asOperator(['emails', 'get', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/Not found \(404 not_found\)[\s\S]*request id: req_/);
  });

  it('exit 2 for usage errors, exit 1 with every field error for a 422', async () => {
    expect((await asOperator(['nonsense'])).code).toBe(2);
    expect((await asOperator(['plans', 'create', '--max-sites', 'many'])).code).toBe(2);
    expect((await asOperator(['plans', 'get'])).code).toBe(2);
    expect((await asOperator(['plans', 'list', '-o', 'yaml'])).code).toBe(2);
    const invalid = await asOperator(['plans', 'create', '--name', 'x', '--max-sites', '-1']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('422 validation_failed');
    expect(invalid.stderr).toContain('/max_sites');
    expect(invalid.stderr).toContain('/max_domains');
    expect((await asOperator(['--help'])).code).toBe(0);
  });

  it('a POST repeated with the same --idempotency-key creates one resource', async () => {
    const key = unique('key');
    const args = ['resellers', 'create', '--name', unique('R '), '--contact-email', 'r@example.com', '--idempotency-key', key];
    const first = await ok(args);
    const again = await ok(args);
    expect(again.json.id).toBe(first.json.id);
    expect((await t.get(`/v1/resellers?limit=200`)).body.data.filter((r: { id: string }) => r.id === first.json.id)).toHaveLength(
      1,
    );
  });
});

describe('dns sync, deploy, backups download, events tail, completion', () => {
  let account: { id: string; username: string };
  let domain: string;
  beforeAll(async () => {
    const plan = await createPlan(t);
    account = await createAccount(t, plan.id);
    domain = `${unique('tour')}.com`;
    await ok(['domains', 'create', '--account', account.id, '--name', domain]);
  });

  it('dns sync shows the diff, applies it with If-Match after --yes, and has nothing to do the second time', async () => {
    const zone = path.join(home, 'zone.txt');
    writeFileSync(zone, `$ORIGIN ${domain}.\nwww 3600 IN A 192.0.2.7\n@ 600 IN TXT "hello"\n`);
    const dry = await ok(['dns', 'sync', domain, '--file', zone, '--dry-run', '-o', 'json']);
    expect(dry.json.created).toHaveLength(2);
    expect((await ok(['records', 'list', '--domain', domain])).json.some((r: { name: string }) => r.name.startsWith('www'))).toBe(
      false,
    );
    expect((await asOperator(['dns', 'sync', domain, '--file', zone])).code).toBe(2);
    const applied = await asOperator(['dns', 'sync', domain, '--file', zone, '--yes', '-o', 'table']);
    expect(applied.code).toBe(0);
    expect(applied.stderr).toContain('+ www 3600 A 192.0.2.7');
    expect(applied.stderr).toMatch(/Applied: serial \d+/);
    const records = (await ok(['records', 'list', '--domain', domain])).json;
    expect(records.find((r: { type: string }) => r.type === 'A')).toMatchObject({ content: '192.0.2.7', ttl: 3600 });
    const again = await asOperator(['dns', 'sync', domain, '--file', zone, '--yes']);
    expect(again.json).toMatchObject({ created: [], updated: [], deleted: [] });
    const againTable = await asOperator(['dns', 'sync', domain, '--file', zone, '-o', 'table']);
    expect(againTable.stderr).toContain('nothing to change');
  });

  it('deploy packs a directory, uploads it and waits until it is live', async () => {
    await ok(['sites', 'create', '--account', account.id, '--hostname', domain, '--wait']);
    const dir = path.join(home, 'public');
    mkdirSync(path.join(dir, 'css'), { recursive: true });
    writeFileSync(path.join(dir, 'index.html'), '<h1>from the cli</h1>');
    writeFileSync(path.join(dir, 'css', 'site.css'), 'h1{}');
    // The archive is packed into a file of its own under TMPDIR, and removed once sent.
    const scratch = mkdtempSync(path.join(home, 'tmp-'));
    const r = await berth(['deploy', domain, dir], { BERTH_URL: baseUrl, BERTH_TOKEN: OPERATOR_TOKEN, TMPDIR: scratch });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ status: 'live', file_count: 2 });
    expect(r.stderr).toMatch(/Uploading: [\d.]+ of [\d.]+ MB/);
    expect(readdirSync(scratch).filter((name) => name.startsWith('berth-'))).toEqual([]); // tsx keeps its cache there too
  });

  it('backups download writes the archive with its SHA-256 checked, and resumes a broken download with Range', async () => {
    const op = (await ok(['backups', 'create', '--account', account.id, '--wait'])).json;
    expect(op.status).toBe('succeeded');
    const backupId = op.resource.id as string;
    const file = path.join(home, 'backup.tar.gz');
    const whole = await ok(['backups', 'download', backupId, '-o', file]);
    expect(whole.stderr).toContain('SHA-256 checked');
    const bytes = readFileSync(file);
    const { sha256 } = (await t.get(`/v1/backups/${backupId}`)).body;
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha256);
    const resumedFile = path.join(home, 'resumed.tar.gz');
    const half = Math.floor(bytes.length / 2);
    writeFileSync(`${resumedFile}.part`, bytes.subarray(0, half));
    const resumed = await ok(['backups', 'download', backupId, '-o', resumedFile]);
    expect(resumed.stderr).toContain(`Resuming at ${half} bytes`);
    expect(readFileSync(resumedFile).equals(bytes)).toBe(true);
    // A damaged partial file is caught by the checksum, and keeps its .part name.
    const damaged = path.join(home, 'damaged.tar.gz');
    writeFileSync(`${damaged}.part`, Buffer.alloc(half, 0x41));
    const refused = await asOperator(['backups', 'download', backupId, '-o', damaged]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("does not match the archive's SHA-256");
  });

  it('events tail prints new events as they happen, one JSON object per line, each once', async () => {
    const before = await createAccount(t, (await createPlan(t)).id);
    const since = new Date(Date.now() - 60_000).toISOString();
    const child = spawn(process.execPath, [BIN, 'events', 'tail', '--type', 'account.created', '--since', since, '-o', 'json'], {
      env: { PATH: process.env.PATH ?? '', HOME: home, BERTH_URL: baseUrl, BERTH_TOKEN: OPERATOR_TOKEN },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      const created = await createAccount(t, (await createPlan(t)).id);
      const lines = await eventually(async () => {
        const parsed = out
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { type: string; resource: { id: string } });
        return parsed.some((e) => e.resource.id === created.id) ? parsed : undefined;
      }, 30_000);
      // What happened since --since first, then what the feed answered as it committed.
      expect(lines.map((e) => e.resource.id)).toContain(before.id);
      expect(lines.map((e) => e.resource.id).indexOf(before.id)).toBeLessThan(
        lines.map((e) => e.resource.id).indexOf(created.id),
      );
      expect(lines.every((e) => e.type === 'account.created')).toBe(true);
      expect(new Set(lines.map((e) => JSON.stringify(e))).size).toBe(lines.length);
    } finally {
      child.kill();
    }
  });

  it('completion bash completes commands, verbs and flags', async () => {
    const script = (await ok(['completion', 'bash'])).stdout;
    const complete = (words: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(
          'bash',
          [
            '-c',
            `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _berth; echo "\${COMPREPLY[@]}"`,
          ],
          (err, stdout) => (err ? reject(new Error(err.message)) : resolve(stdout.trim())),
        ),
      );
    expect((await complete(['berth', 'acc'])).split(' ')).toEqual(['accounts']);
    expect((await complete(['berth', 'accounts', ''])).split(' ')).toEqual(expect.arrayContaining(['list', 'create', 'suspend']));
    expect((await complete(['berth', 'emails', 'create', '--gen'])).split(' ')).toEqual(['--generate-password']);
    expect((await ok(['completion', 'fish'])).stdout).toContain('complete -c berth -n __fish_use_subcommand -a accounts');
    expect((await ok(['completion', 'zsh'])).stdout).toContain('bashcompinit');
    expect((await asOperator(['completion', 'tcsh'])).code).toBe(2);
  });
});

describe("the CLI reference's tour", () => {
  it('runs line by line against a real server', async () => {
    const readme = readFileSync(path.join(ROOT, 'docs', 'Reference', 'cli.md'), 'utf8');
    const block = /<!-- cli-tour -->\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const dir = mkdtempSync(path.join(home, 'tour-'));
    mkdirSync(path.join(dir, 'public'));
    writeFileSync(path.join(dir, 'public', 'index.html'), '<h1>tour</h1>');
    writeFileSync(path.join(dir, 'zone.txt'), 'www 3600 IN A 192.0.2.10\n');
    mkdirSync(path.join(dir, '.local/share/bash-completion/completions'), { recursive: true });
    const vars: Record<string, string> = { TOKEN: OPERATOR_TOKEN, USERNAME: unique('tour'), DOMAIN: `${unique('tour')}.com` };
    for (const line of (block as string).split('\n').filter((l) => l.startsWith('berth '))) {
      const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          'bash',
          ['-c', `berth() { "${process.execPath}" "${BIN}" "$@"; }\n${line.replace('http://127.0.0.1:8080', baseUrl)}`],
          { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir, BERTH_CONFIG: path.join(dir, 'berth.json'), ...vars } },
          (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      );
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      const out = r.stdout.trim().startsWith('{') ? (JSON.parse(r.stdout) as Record<string, any>) : {};
      if (line.startsWith('berth plans create')) vars.PLAN_ID = out.id;
      if (line.startsWith('berth accounts create')) vars.ACCOUNT_ID = out.id;
      if (line.startsWith('berth accounts login-link')) expect(out.url).toMatch(/\/panel\/#login_code=[\w-]{43}$/);
      if (line.startsWith('berth backups create')) vars.BACKUP_ID = out.resource.id;
    }
    expect(statSync(path.join(dir, 'backup.tar.gz')).size).toBeGreaterThan(0);
    expect(readFileSync(path.join(dir, '.local/share/bash-completion/completions/berth'), 'utf8')).toContain('_berth');
  });
});
