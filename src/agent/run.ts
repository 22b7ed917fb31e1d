import { X509Certificate } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { publicMessage } from '../lib/errors.js';
import { SYSTEM_TIME_ZONE } from '../lib/time-zone.js';
import type { AgentReport, AgentUnit } from '../provisioning/agent-units.js';
import { certificateRequest } from '../tls/internal-ca.js';
import { generateKey } from '../tls/keys.js';
import { applyCronUnit, applySshUnit, sendCronRuns, sendSshLogins } from './account-units.js';
import { agentCall, agentDownload, agentUpload } from './client.js';
import type { AgentDrivers } from './drivers.js';
import { applyForward } from './forward.js';
import { applyMailUnit } from './mail.js';
import { receiveUnits } from './receive.js';
import { STAGED_KEPT_MS, sweepStaged } from './staged.js';
import { type CachedUnits, type Identity, loadUnits, saveIdentity, saveUnits } from './state.js';
import { runTask } from './task.js';
import { measureUnits } from './usage.js';
import { applySiteUnit } from './web.js';
import { ofAccount, withdrawAccount } from './withdraw.js';

export interface AgentOptions {
  dataDir: string;
  identity: Identity;
  drivers: AgentDrivers;
  version: string;
  /** Bytes used where the agent keeps its data (its heartbeat carries them). */
  diskBytesUsed: () => Promise<number>;
  log: (message: string) => void;
  /** Seconds a poll waits for a change (at most 30). */
  waitSeconds?: number;
  /** How often the usage of what it holds is measured and sent (at most once per poll). */
  measureEveryMs?: number;
}

const unitKey = (u: Pick<AgentUnit, 'kind' | 'key'>) => `${u.kind}:${u.key}`;

/** Measurements per usage request: the listener takes up to 50,000, each a few dozen bytes. */
const USAGE_BATCH = 10_000;
const SWEEP_EVERY_MS = 3600_000;

/**
 * `berth agent run`: level-triggered, like a kubelet. The agent re-applies the units it kept on
 * disk, then long-polls the listener for the units of its server that are not applied yet,
 * applies each with its local driver (one failing does not hold back the others, and is tried
 * again after a backoff), and reports the generation applied or the error, per unit. Its
 * certificate is renewed at two thirds of its life. Resolves when `signal` aborts.
 */
export async function runAgent(o: AgentOptions, signal: AbortSignal): Promise<void> {
  let identity = o.identity;
  const cached: CachedUnits = await loadUnits(o.dataDir);

  async function apply(unit: AgentUnit): Promise<AgentReport> {
    const report = { kind: unit.kind, key: unit.key, generation: unit.generation };
    try {
      if (unit.kind === 'database') await o.drivers.database.applyAccount(unit.spec);
      else if (unit.kind === 'cron') await applyCronUnit(o, unit.spec);
      else if (unit.kind === 'ssh') await applySshUnit(o, unit.spec);
      else if (unit.kind === 'mail')
        await applyMailUnit({ dataDir: o.dataDir, mail: o.drivers.mail }, unit.key, unit.spec, cached.units);
      else if (unit.kind === 'task') {
        const artifact = `/agent/v1/units/task/${unit.key}/artifacts`;
        await runTask(
          {
            dataDir: o.dataDir,
            database: o.drivers.database,
            cron: o.drivers.cron,
            input: () => agentDownload(identity.url, identity, `${artifact}/input`),
            output: (body) => agentUpload(identity.url, identity, `${artifact}/output`, body),
          },
          unit.key,
          unit.spec,
        );
      } else if (unit.kind === 'forward') await applyForward(o, unit.spec, cached.units);
      else if (unit.kind === 'withdrawal') {
        await withdrawAccount(o, unit.spec, cached.units);
        // Nothing of the account is re-applied after a reboot, and what comes back later is applied afresh.
        for (const u of cached.units) if (ofAccount(u, unit.spec.account_id)) delete cached.applied[unitKey(u)];
        cached.units = cached.units.filter((u) => !ofAccount(u, unit.spec.account_id));
      } else
        await applySiteUnit(
          {
            dataDir: o.dataDir,
            drivers: o.drivers,
            fetchRelease: (spec, release) =>
              agentDownload(identity.url, identity, `/agent/v1/units/web/${spec.site_id}/artifacts/${release}`),
          },
          unit.spec,
        );
      // A withdrawal or a forward is handed out until reported, and a later one of the account may
      // come with the same generation: each is applied whenever it comes.
      if (unit.kind !== 'withdrawal' && unit.kind !== 'forward') cached.applied[unitKey(unit)] = unit.generation;
      return report;
    } catch (err) {
      o.log(`apply of ${unitKey(unit)} at generation ${unit.generation} failed: ${publicMessage(err)}`);
      return { ...report, error: publicMessage(err) };
    }
  }

  // After a reboot the server serves what it served before, before the control plane is reached.
  for (const unit of cached.units) await apply(unit);

  async function renewIfDue(): Promise<void> {
    const cert = new X509Certificate(identity.certificate_pem);
    const from = new Date(cert.validFrom).getTime();
    const to = new Date(cert.validTo).getTime();
    if (Date.now() < from + ((to - from) * 2) / 3) return;
    const keyPem = await generateKey();
    const res = await agentCall(identity.url, identity, 'POST', '/agent/v1/renew', {
      csr: await certificateRequest(keyPem, 'berth-agent'),
    });
    if (res.status !== 201) throw new Error(`renewal refused (${res.status}): ${res.body?.detail ?? ''}`);
    identity = { ...identity, key_pem: keyPem, certificate_pem: String(res.body?.certificate_pem) };
    await saveIdentity(o.dataDir, identity);
    o.log('client certificate renewed');
  }

  // Usage goes with the first poll that gets through, then every measureEveryMs. Its failure
  // (a control plane that does not take it yet) is logged and holds back no unit.
  let measureAt = 0;
  async function sendUsage(): Promise<void> {
    if (Date.now() < measureAt) return;
    measureAt = Date.now() + (o.measureEveryMs ?? 60_000);
    try {
      const measurements = await measureUnits(o.dataDir, o.drivers, cached.units);
      // In requests the listener takes (at most USAGE_BATCH each), however many units the server holds.
      for (let i = 0; i < measurements.length; i += USAGE_BATCH) {
        const batch = { measurements: measurements.slice(i, i + USAGE_BATCH) };
        const sent = await agentCall(identity.url, identity, 'POST', '/agent/v1/usage', batch, { signal });
        if (sent.status !== 204) throw new Error(`usage refused (${sent.status}): ${sent.body?.detail ?? ''}`);
      }
    } catch (err) {
      if (!signal.aborted) o.log(`usage not sent: ${publicMessage(err)}`);
    }
  }

  // Staged copies no move came back for, looked for hourly, the first time an hour after the
  // start (a week's copies wait no longer for it, and a start has its units to apply first).
  let sweepAt = Date.now() + SWEEP_EVERY_MS;
  async function sweepIfDue(): Promise<void> {
    if (Date.now() < sweepAt) return;
    sweepAt = Date.now() + SWEEP_EVERY_MS;
    await sweepStaged(o.dataDir, STAGED_KEPT_MS).catch((err: unknown) => o.log(`staged copies not swept: ${publicMessage(err)}`));
  }

  let known = '';
  let failures = 0;
  // Seconds until units that failed to apply are tried again (0: none failed): the poll returns
  // then even without a change, with them still pending. 2, 4, 8, then every 10 s while they keep
  // failing: a daemon back from a restart is in use within seconds, at one poll per 10 s.
  let retry = 0;
  while (!signal.aborted) {
    try {
      await renewIfDue();
      // The poll also returns when the next measurement is due: usage is sent after a poll.
      const untilMeasure = Math.max(1, Math.ceil((measureAt - Date.now()) / 1000));
      const wait = Math.min(o.waitSeconds ?? 30, retry || 30, untilMeasure);
      const res = await agentCall(identity.url, identity, 'GET', `/agent/v1/units?wait=${wait}&known=${known}`, undefined, {
        headers: {
          'berth-agent-version': o.version,
          'berth-agent-timezone': SYSTEM_TIME_ZONE,
          'berth-disk-bytes-used': String(await o.diskBytesUsed()),
        },
        signal,
        timeoutMs: (wait + 30) * 1000,
      });
      if (res.status !== 200) throw new Error(`poll refused (${res.status}): ${res.body?.detail ?? res.text.slice(0, 200)}`);
      const { units, refused } = receiveUnits(res.body?.units);
      const reports: AgentReport[] = refused;
      for (const unit of units) {
        if (cached.applied[unitKey(unit)] === unit.generation)
          reports.push({ kind: unit.kind, key: unit.key, generation: unit.generation });
        else reports.push(await apply(unit));
      }
      // The cache keeps every unit ever handed over, its latest generation, until its account is withdrawn.
      const byKey = new Map(cached.units.map((u) => [unitKey(u), u]));
      // Withdrawals and tasks are not kept: they are done once (the control plane hands them out
      // until they are reported), and a withdrawal run again could take a later account of the same name.
      // A removed mail domain is forgotten once removed (its removal is idempotent, if handed out again).
      for (const unit of units) {
        if (unit.kind === 'withdrawal' || unit.kind === 'task') continue;
        if (unit.kind === 'mail' && unit.spec.removed) {
          byKey.delete(unitKey(unit));
          delete cached.applied[unitKey(unit)];
        } else byKey.set(unitKey(unit), unit);
      }
      cached.units = [...byKey.values()];
      if (units.length > 0) await saveUnits(o.dataDir, cached);
      let nextKnown = res.body?.known ?? '';
      if (reports.length > 0) {
        const sent = await agentCall(identity.url, identity, 'POST', '/agent/v1/reports', { reports }, { signal });
        if (sent.status !== 204) throw new Error(`report refused (${sent.status}): ${sent.body?.detail ?? ''}`);
        nextKnown = sent.known ?? '';
      }
      await sendUsage();
      await sweepIfDue();
      // Like usage, runs not taken now are sent with a later poll; they hold back no unit.
      await sendCronRuns(o.drivers.cron, (runs) =>
        agentCall(identity.url, identity, 'POST', '/agent/v1/cron-runs', { runs }, { signal }),
      ).catch((err: unknown) => signal.aborted || o.log(`cron runs not sent: ${publicMessage(err)}`));
      await sendSshLogins(o.drivers.ssh, (logins) =>
        agentCall(identity.url, identity, 'POST', '/agent/v1/ssh-logins', { logins }, { signal }),
      ).catch((err: unknown) => signal.aborted || o.log(`ssh logins not sent: ${publicMessage(err)}`));
      known = nextKnown;
      failures = 0;
      retry = reports.some((r) => r.error !== undefined) ? Math.min(10, retry ? retry * 2 : 2) : 0;
    } catch (err) {
      if (signal.aborted) break;
      failures++;
      known = '';
      o.log(`agent: ${publicMessage(err)}`);
      // Back off 1, 2, 4 ... 30 s while the control plane cannot be reached.
      await sleep(Math.min(30_000, 1000 * 2 ** Math.min(failures - 1, 5)), undefined, { signal }).catch(() => undefined);
    }
  }
}
