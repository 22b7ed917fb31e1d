import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { enrol } from '../../src/agent/enrol.js';
import { runAgent } from '../../src/agent/run.js';
import type { Identity } from '../../src/agent/state.js';
import type { DatabaseDriver } from '../../src/provisioning/driver.js';
import { EmbeddedDatabaseDriver } from '../../src/provisioning/drivers/embedded-db.js';
import { EmbeddedMailDriver } from '../../src/provisioning/drivers/embedded-mail.js';
import { EmbeddedPhpDriver } from '../../src/provisioning/drivers/embedded-php.js';
import { EmbeddedWebDriver } from '../../src/provisioning/drivers/embedded-web.js';
import { cronDriver, sshDriver } from '../../src/provisioning/drivers/index.js';
import { eventually, type TestApp } from './app.js';

/**
 * Hosting servers with agents in this process: added through the API, enrolled with the agent's
 * own code over real mutual TLS (`url`: the agent listener), run with the embedded drivers
 * rendering into each agent's own data directory.
 */
export function agentHarness(t: () => TestApp, url: () => string) {
  const dirs: string[] = [];
  const stops: (() => Promise<void>)[] = [];
  const newAgentDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'berth-agent-'));
    dirs.push(dir);
    return dir;
  };

  async function addServer(body: Record<string, unknown> = {}) {
    const r = await t().post('/v1/servers', {
      name: `db-${Math.random().toString(36).slice(2, 8)}`,
      roles: ['database'],
      ipv4: '127.0.0.12',
      capacity: { accounts: 100 },
      ...body,
    });
    expect(r.status, r.text).toBe(201);
    return r.body;
  }

  /** The server added and enrolled with the agent's own code. */
  async function enrolledServer(body: Record<string, unknown> = {}) {
    const server = await addServer(body);
    const fingerprint = /--ca-fingerprint (\S+)/.exec(server.enrolment.command)?.[1] as string;
    const dataDir = newAgentDir();
    const identity = await enrol({ url: url(), token: server.enrolment.token, caFingerprint: fingerprint, dataDir });
    return { server, identity, dataDir, fingerprint };
  }

  /** The embedded drivers, rendering into the agent's own data directory. */
  const agentDrivers = (dataDir: string) => ({
    database: new EmbeddedDatabaseDriver(dataDir, '%') as DatabaseDriver,
    mail: new EmbeddedMailDriver(dataDir),
    web: new EmbeddedWebDriver(dataDir),
    php: new EmbeddedPhpDriver(dataDir, ['8.3'], { socketDir: path.join(dataDir, 'php'), webGroup: 'www-data' }),
    cron: cronDriver(dataDir, null),
    ssh: sshDriver(dataDir, null),
  });

  /** runAgent in this process until the returned stop (or `stopAgents`) is called. */
  function startAgent(
    dataDir: string,
    identity: Identity,
    drivers = agentDrivers(dataDir),
    waitSeconds = 5,
    measureEveryMs = 60_000,
  ) {
    const controller = new AbortController();
    const running = runAgent(
      {
        dataDir,
        identity,
        drivers,
        version: '0.1.0',
        diskBytesUsed: async () => 1234,
        log: () => undefined,
        waitSeconds,
        measureEveryMs,
      },
      controller.signal,
    );
    const stop = async () => {
      controller.abort();
      await running;
    };
    stops.push(stop);
    return stop;
  }

  /**
   * A server with every role (`roles` unless given), enrolled, its agent running; `stop` stops
   * it, `start` runs it again.
   */
  async function runningServer(body: Record<string, unknown>) {
    const s = await enrolledServer({ roles: ['web', 'mail', 'database'], ...body });
    let stop = startAgent(s.dataDir, s.identity);
    await eventually(async () => (await t().get(`/v1/servers/${s.server.id}`)).body.status === 'online');
    return { ...s, stop: () => stop(), start: () => void (stop = startAgent(s.dataDir, s.identity)) };
  }

  /** Stops every agent started here that is still running. */
  const stopAgents = async () => {
    for (const stop of stops.splice(0)) await stop();
  };

  const removeDirs = () => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };

  return { newAgentDir, addServer, enrolledServer, agentDrivers, startAgent, runningServer, stopAgents, removeDirs };
}
