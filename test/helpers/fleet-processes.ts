import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { currentLink, mailRoot, siteDir } from '../../src/layout.js';
import { type TarEntry, tarGz } from './archives.js';
import { type MariadbEnv, noMariadbServers, startMariadb, stopDaemons } from './mariadb-servers.js';
import { freePort } from './ports.js';
import { startAgentProcess } from './server-process.js';

/**
 * What a test of real processes keeps: its temporary directories (removed after all) and its
 * children (killed with SIGKILL after all).
 */
export function processKit(prefix: string) {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return {
    tempDir(): string {
      const d = mkdtempSync(path.join(tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    started<T extends { child: ChildProcess }>(p: T): T {
      children.push(p.child);
      return p;
    },
  };
}

/** fn's value once it is truthy (a failure counts as not yet), looking every `everyMs`. */
export async function until<T>(fn: () => Promise<T>, timeoutMs = 90_000, everyMs = 200): Promise<NonNullable<T>> {
  for (const start = Date.now(); ; await new Promise((r) => setTimeout(r, everyMs))) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
  }
}

/**
 * A move followed to its end while its control plane kills itself at crash points: each time the
 * process exits, `restart` (given the crashes so far) starts it again, with whatever else the test
 * does then, and returns it. The ended move, and how many times the control plane died.
 */
export async function moveThroughCrashes(
  move: () => Promise<Record<string, any>>,
  server: { exited: Promise<unknown> },
  restart: (crashes: number) => Promise<{ exited: Promise<unknown> }>,
  timeoutMs: number,
): Promise<{ ended: Record<string, any>; crashes: number }> {
  for (let crashes = 0; ; crashes++) {
    const ended = await Promise.race([
      server.exited.then(() => null),
      until(async () => {
        const m = await move();
        return ['completed', 'failed', 'canceled'].includes(m.status) ? m : null;
      }, timeoutMs),
    ]);
    if (ended) return { ended, crashes };
    server = await restart(crashes + 1);
  }
}

export type ApiCall = (
  method: string,
  url: string,
  body?: unknown,
  raw?: Buffer,
) => Promise<{ status: number; body: Record<string, any> }>;

/** The API of a server process on `port`, as `token`: JSON bodies, or `raw` as a tar.gz upload. */
export function apiOf(port: number, token: string): ApiCall {
  return async (method, url, body, raw) => {
    const r = await fetch(`http://127.0.0.1:${port}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(raw ? { 'content-type': 'application/gzip' } : body ? { 'content-type': 'application/json' } : {}),
      },
      body: raw ? new Uint8Array(raw) : body ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: await r.json().catch(() => undefined) };
  };
}

/**
 * A server made through the API and its agent, enrolled with the printed command, running and
 * online; `env` is the agent's settings beyond its data directory (its drivers), kept as `s.env`
 * for a restart.
 */
export async function enrolledServer(
  call: ApiCall,
  kit: ReturnType<typeof processKit>,
  server: { name: string; roles: string[]; ipv4: string },
  env: Record<string, string> = {},
) {
  const created = await call('POST', '/v1/servers', { ...server, capacity: { accounts: 50 } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const dataDir = kit.tempDir();
  const enrolment = kit.started(startAgentProcess((created.body.enrolment.command as string).split(' ').slice(2), dataDir, env));
  expect(await enrolment.exited, enrolment.output()).toBe(0);
  const s = { id: created.body.id as string, dataDir, env, agent: kit.started(startAgentProcess(['run'], dataDir, env)) };
  await until(async () => (await call('GET', `/v1/servers/${s.id}`)).body.status === 'online');
  return s;
}

/**
 * Hosting servers as enrolledServer makes them, each with a MariaDB of its own on its address
 * (role `database`) where MariaDB servers can be started here (`skipped` says why not); those are
 * stopped after all, before the kit removes their directories (hooks run last-registered first).
 */
export function hostingServers(kit: ReturnType<typeof processKit>) {
  const skipped = noMariadbServers();
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map(stopDaemons)));
  const start = async (call: ApiCall, name: string, ipv4: string) => {
    let db: MariadbEnv | null = null;
    if (!skipped) {
      const dir = kit.tempDir();
      dirs.push(dir);
      db = await startMariadb(dir, ipv4, freePort);
    }
    const roles = db ? ['web', 'mail', 'database'] : ['web', 'mail'];
    return { ...(await enrolledServer(call, kit, { name, roles, ipv4 }, db ?? {})), db };
  };
  return { skipped, start };
}

/** The files under `dir` (at any depth) whose content is `text`. */
export function filesHolding(dir: string, text: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && readFileSync(path.join(e.parentPath, e.name), 'utf8') === text)
    .map((e) => path.join(e.parentPath, e.name));
}

/**
 * An account made through the API on plan `planId`, placed as `placement` says (the control
 * plane's own server where it says nothing), with the domain `<username>.example.com` (mail on,
 * no records: a move forwards for BERTH_MOVE_TTL_S, not for a record's TTL), a site serving
 * index.html (holding the username) and `files`, and a mailbox info@ the domain. Once both are
 * on the server whose data directory is `sourceDir`, a message is put in the mailbox there as
 * its mail server would deliver it. `release` and `maildir` name the site's live files and the
 * mailbox's Maildir under any server's data directory.
 */
export async function accountWithSite(
  call: ApiCall,
  o: { username: string; planId: string; sourceDir: string; placement?: Record<string, string>; files?: TarEntry[] },
) {
  const account = (
    await call('POST', '/v1/accounts', {
      username: o.username,
      contact_email: 'a@example.com',
      plan_id: o.planId,
      ...(o.placement && { placement: o.placement }),
    })
  ).body;
  expect(account.id, JSON.stringify(account)).toBeTruthy();
  const domain = `${o.username}.example.com`;
  const made = await call('POST', '/v1/domains', { account_id: account.id, name: domain, mail_enabled: true, template: 'empty' });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const site = (await call('POST', '/v1/sites', { account_id: account.id, hostname: domain })).body;
  await until(async () => (await call('GET', `/v1/sites/${site.id}`)).body.status === 'active');
  const archive = tarGz([{ path: 'index.html', content: o.username }, ...(o.files ?? [])]);
  const deployed = await call('POST', `/v1/sites/${site.id}/deployments`, undefined, archive);
  expect(deployed.status, JSON.stringify(deployed.body)).toBe(202);
  const box = await call('POST', '/v1/emails', { address: `info@${domain}`, password: 'a long enough passphrase' });
  expect(box.status, JSON.stringify(box.body)).toBe(201);
  const release = (dir: string) => currentLink(siteDir(dir, account.id, site.id));
  const maildir = (dir: string) => path.join(mailRoot(dir, account.id, domain), box.body.id, 'Maildir');
  const lastFile = o.files?.at(-1)?.path ?? 'index.html';
  await until(
    async () => existsSync(path.join(release(o.sourceDir), lastFile)) && existsSync(path.join(maildir(o.sourceDir), 'new')),
  );
  const message = `Subject: kept\r\n\r\n${o.username} ${Date.now()}\r\n`;
  writeFileSync(path.join(maildir(o.sourceDir), 'new', `${Date.now()}.M1P1.source`), message);
  return { account, domain, site, release, maildir, message };
}
