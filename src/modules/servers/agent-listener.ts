import type { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { hashSecret } from '../../auth/secret.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { closeConnectionsOnClose } from '../../http/connections.js';
import { installErrorHandling } from '../../http/errors.js';
import { MemoryBucketStore } from '../../http/rate-limit.js';
import { installValidation } from '../../http/validation.js';
import { forbidden, invalid, notFound, rateLimited, unauthenticated } from '../../lib/errors.js';
import { isTimeZone } from '../../lib/time-zone.js';
import type { Clock } from '../../lib/time.js';
import { AgentMeasurement, AgentReport, type AgentUnit, type AgentUnitSource } from '../../provisioning/agent-units.js';
import { CronRunRecord } from '../../provisioning/render/cron.js';
import { SshLogin } from '../../provisioning/render/ssh.js';
import {
  type CertificateAuthority,
  certificateFingerprint,
  signClientCertificate,
  signWithCertificateAuthority,
} from '../../tls/internal-ca.js';
import { generateKey } from '../../tls/keys.js';
import { pendingOf } from './pending-units.js';
import * as repo from './repo.js';
import { AGENT_WAIT_MS, serverStatus } from './status.js';
import { AGENT_UNITS_CHANNEL } from './wake.js';

/** An agent's client certificate lives 30 days; the agent renews it at two thirds. */
const CLIENT_CERTIFICATE_DAYS = 30;
const LISTENER_CERTIFICATE_DAYS = 7;
const DAY_MS = 86_400_000;

export interface AgentListenerDeps {
  config: Readonly<Config>;
  db: Db;
  clock: Clock;
  authority: () => Promise<CertificateAuthority>;
  sources: AgentUnitSource[];
  /** server.online, once a server that was not online polls again. */
  announce: (serverId: string) => Promise<void>;
  onError: (err: unknown) => void;
}

/** The URL agents are given: BERTH_AGENT_URL, else the listen address. */
export function agentUrl(config: Readonly<Config>): string | null {
  if (config.agentUrl) return config.agentUrl;
  const listen = config.agentListen;
  if (!listen) return null;
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  return `https://${host}:${listen.port}`;
}

const refused = (message: string) => unauthenticated(message, {});

const EnrolBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200 }),
    csr: Type.String({ minLength: 1, maxLength: 16_384 }),
  },
  { additionalProperties: false },
);
const RenewBody = Type.Object({ csr: Type.String({ minLength: 1, maxLength: 16_384 }) }, { additionalProperties: false });
const UnitsQuery = Type.Object(
  {
    wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 30 })),
    known: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
const ReportsBody = Type.Object({ reports: Type.Array(AgentReport, { maxItems: 1000 }) }, { additionalProperties: false });
const UsageBody = Type.Object(
  { measurements: Type.Array(AgentMeasurement, { maxItems: 50_000 }) },
  { additionalProperties: false },
);

const CronRunsBody = Type.Object({ runs: Type.Array(CronRunRecord, { maxItems: 500 }) }, { additionalProperties: false });
const SshLoginsBody = Type.Object({ logins: Type.Array(SshLogin, { maxItems: 1000 }) }, { additionalProperties: false });

const ArtifactParams = Type.Object({
  kind: Type.String({ pattern: '^[a-z]{1,20}$' }),
  key: Type.String({ pattern: '^[a-z]{2,4}_[0-9a-z]{26}$' }),
  // A deployment's id, or a task's `input` and `output`.
  name: Type.String({ pattern: '^[a-z0-9_]{1,40}$' }),
});

/** A unit at its generation, as a state tag counts it and as a report names it. */
const unitTag = (u: Pick<AgentUnit, 'kind' | 'key' | 'generation'>) => `${u.kind}:${u.key}:${u.generation}`;
/** The state an agent has been handed: changes whenever a unit is added, changed or applied. */
const stateTag = (units: AgentUnit[]) => hashSecret(units.map(unitTag).join('\n')).slice(0, 32);

/**
 * The agent listener: HTTPS with mutual TLS, apart from the public API. An agent
 * enrols once with its one-use token and a CSR (no client certificate yet), and from then on
 * presents the client certificate the agent CA issued it: a certificate of another CA or
 * expired is cut off at the handshake; one the server no longer holds (a new enrolment revoked
 * it) is refused. User tokens mean nothing here. Every poll is a heartbeat; a poll waits until
 * the server's units change (woken by the commit, through NOTIFY) or `wait` seconds pass.
 */
export async function agentListener(deps: AgentListenerDeps): Promise<FastifyInstance> {
  const { config, db, clock } = deps;
  const ca = await deps.authority();
  const url = new URL(agentUrl(config) as string);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // The listener's own certificate, from the agent CA for the host agents dial; a new one each
  // day, so a process that runs for months never serves an expired one.
  const ownCertificate = async () => {
    const key = await generateKey();
    return { key, cert: await signWithCertificateAuthority(ca, [host], key, clock.now(), LISTENER_CERTIFICATE_DAYS) };
  };

  const app = Fastify({
    logger: false,
    https: {
      ...(await ownCertificate()),
      ca: [ca.certificate_pem],
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
    },
    bodyLimit: 4 * 1024 * 1024,
  }).withTypeProvider<TypeBoxTypeProvider>();
  closeConnectionsOnClose(app);
  // A certificate is optional at the handshake (enrolment has none yet), but one that does not
  // chain to the agent CA, or has expired, ends the connection there.
  app.server.on('secureConnection', (socket: TLSSocket) => {
    const peer = socket.getPeerCertificate();
    if (peer && Object.keys(peer).length > 0 && !socket.authorized) socket.destroy();
  });
  installValidation(app);
  installErrorHandling(app, null);
  const renewal = setInterval(() => {
    void ownCertificate().then((own) => app.server.setSecureContext({ ...own, ca: [ca.certificate_pem] }), deps.onError);
  }, DAY_MS);
  renewal.unref();
  app.addHook('onClose', async () => clearInterval(renewal));

  /** A client certificate for the server, from a CSR signed by its own key (else 422 `invalid_csr`). */
  const certify = (csr: string, serverId: string) =>
    signClientCertificate(ca, csr, serverId, clock.now(), CLIENT_CERTIFICATE_DAYS).catch(() => {
      throw invalid([{ pointer: '/csr', code: 'invalid_csr', detail: 'is not a certificate request signed by its key' }]);
    });

  /** The server whose current certificate the connection presented. */
  async function serverOf(request: FastifyRequest): Promise<repo.ServerRow> {
    const socket = request.raw.socket as TLSSocket;
    const peer = socket.authorized ? socket.getPeerCertificate() : undefined;
    if (!peer?.subject?.CN) throw refused('A client certificate from the agent CA is required.');
    const server = await repo.findServerById(db, String(peer.subject.CN));
    if (!server || server.certificate_serial?.toLowerCase() !== peer.serialNumber.toLowerCase())
      throw refused('This certificate is not the server’s current one.');
    return server;
  }

  // What each server was last answered, and the count of its changes then: a poll that knows that
  // state, with no change since (a commit's NOTIFY, a report), waits without asking every source
  // again. An idle agent's poll costs its certificate check and heartbeat.
  const changes = new Map<string, number>();
  const answered = new Map<string, { known: string; at: number }>();
  const changed = (serverId: string) => changes.set(serverId, (changes.get(serverId) ?? 0) + 1);
  const wakers = new Map<string, Set<() => void>>();
  const unsubscribe = await db.listen(AGENT_UNITS_CHANNEL, (serverId) => {
    changed(serverId);
    for (const wake of wakers.get(serverId) ?? []) wake();
  });
  // Polls under way answer at once when the listener closes (each waits up to 30 s otherwise,
  // and a close waits for the requests under way); the agents poll another process meanwhile.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    for (const set of wakers.values()) for (const wake of set) wake();
  });
  app.addHook('onClose', async () => unsubscribe());
  const waitForChange = (serverId: string, ms: number) =>
    new Promise<void>((resolve) => {
      const set = wakers.get(serverId) ?? new Set();
      wakers.set(serverId, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
    });

  const pendingUnits = pendingOf(db, deps.sources);

  // What an enrolling agent trusts once its fingerprint matches the one its command names.
  app.get('/agent/v1/ca', async (_request, reply) => reply.type('application/x-pem-file').send(ca.certificate_pem));

  const failures = new MemoryBucketStore(() => clock.now().getTime());
  const FAILED_ENROLMENTS = { name: 'enrol_failures', quota: config.rateLimit.authFailuresPerMinute, windowSeconds: 60 };
  app.post('/agent/v1/enrol', { schema: { body: EnrolBody } }, async (request, reply) => {
    const { token, csr } = request.body;
    const now = clock.now();
    // The token is spent in the same transaction that stores the certificate: a failure leaves it unspent.
    const issued = await db.transaction(async (tx) => {
      const server = await repo.spendEnrolmentToken(tx, hashSecret(token), now);
      if (!server) {
        // Failures are counted per address and slowed down, as the API's are; a valid token
        // never is.
        const charge = failures.charge(`ip:${request.ip}`, FAILED_ENROLMENTS);
        if (!charge.allowed)
          throw rateLimited(FAILED_ENROLMENTS.name, 'Too many failed enrolments from this address.', {
            'retry-after': String(charge.retryAfterSeconds),
          });
        throw refused('The enrolment token is unknown, used or expired.');
      }
      const signed = await certify(csr, server.id);
      await repo.setCertificate(tx, server.id, signed.serial, signed.not_after);
      return { server_id: server.id, certificate_pem: signed.certificate_pem };
    });
    return reply
      .code(201)
      .send({ ...issued, ca_pem: ca.certificate_pem, ca_fingerprint: certificateFingerprint(ca.certificate_pem) });
  });

  app.post('/agent/v1/renew', { schema: { body: RenewBody } }, async (request, reply) => {
    const server = await serverOf(request);
    const signed = await certify(request.body.csr, server.id);
    await repo.setCertificate(db, server.id, signed.serial, signed.not_after);
    return reply.code(201).send({ server_id: server.id, certificate_pem: signed.certificate_pem });
  });

  app.get('/agent/v1/units', { schema: { querystring: UnitsQuery } }, async (request) => {
    const server = await serverOf(request);
    const version = String(request.headers['berth-agent-version'] ?? '').slice(0, 100) || 'unknown';
    const disk = Number(request.headers['berth-disk-bytes-used'] ?? 0);
    const zone = String(request.headers['berth-agent-timezone'] ?? '');
    const wasOnline = serverStatus(server, clock.now()) === 'online';
    const agent = {
      version,
      timezone: isTimeZone(zone) ? zone : null,
      diskBytesUsed: Number.isSafeInteger(disk) && disk >= 0 ? disk : 0,
    };
    await repo.markSeen(db, server.id, agent, clock.now());
    if (!wasOnline) await deps.announce(server.id);
    const deadline = Date.now() + (request.query.wait ?? 0) * 1000;
    for (;;) {
      const at = changes.get(server.id) ?? 0;
      const last = answered.get(server.id);
      const unchanged = last?.at === at && last.known === request.query.known;
      if (unchanged && deadline > Date.now() && !closing) {
        await waitForChange(server.id, deadline - Date.now());
        continue;
      }
      const units = await pendingUnits(server.id);
      const known = stateTag(units);
      answered.set(server.id, { known, at });
      const left = deadline - Date.now();
      if (known !== request.query.known || left <= 0 || closing) return { known, units, wait_ms: AGENT_WAIT_MS };
      // A change that came while the units were read woke no one (nothing waited yet), and what
      // was read may predate it: read again rather than wait for the next.
      if ((changes.get(server.id) ?? 0) === at) await waitForChange(server.id, left);
    }
  });

  app.get('/agent/v1/units/:kind/:key/artifacts/:name', { schema: { params: ArtifactParams } }, async (request, reply) => {
    const server = await serverOf(request);
    const { kind, key, name } = request.params;
    const found = await deps.sources.find((s) => s.kind === kind)?.artifact?.(db, server.id, key, name);
    if (found === 'foreign') throw forbidden(`The unit ${key} is not this server's.`);
    if (!found) throw notFound('artifact');
    return reply.type('application/gzip').send(found);
  });

  // A task's output, streamed as the agent makes it (a dump can be far larger than any JSON body).
  app.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));
  app.put(
    '/agent/v1/units/:kind/:key/artifacts/:name',
    { schema: { params: ArtifactParams }, bodyLimit: Number.MAX_SAFE_INTEGER },
    async (request, reply) => {
      const server = await serverOf(request);
      const { kind, key, name } = request.params;
      const stored = await deps.sources
        .find((s) => s.kind === kind)
        ?.receive?.(db, server.id, key, name, request.body as Readable);
      if (stored === 'foreign') throw forbidden(`The unit ${key} is not this server's.`);
      if (!stored) throw notFound('artifact');
      return reply.code(204).send();
    },
  );

  app.post('/agent/v1/reports', { schema: { body: ReportsBody } }, async (request, reply) => {
    const server = await serverOf(request);
    const { reports } = request.body;
    // All or nothing: a report for a unit the server does not own, or of a generation it was
    // never given, refuses the whole request and records none of it.
    await db.transaction(async (tx) => {
      for (const [i, report] of reports.entries()) {
        const source = deps.sources.find((s) => s.kind === report.kind);
        if (!source) throw forbidden(`reports/${i}: this control plane hands out no ${report.kind} units.`);
        const outcome = await source.report(tx, server.id, report);
        if (outcome === 'foreign') throw forbidden(`reports/${i}: the unit ${report.key} is not this server's.`);
        if (outcome === 'future')
          throw invalid([
            { pointer: `/reports/${i}/generation`, code: 'unknown_generation', detail: 'was never given to this server' },
          ]);
      }
    });
    changed(server.id);
    // What is pending now, as the next poll would be answered, when the agent holds all of it (the
    // units it has just reported on, still pending only if they failed): its next poll, made with
    // this tag, waits for the next change rather than coming straight back with nothing to apply
    // (a round trip on the way of every change that follows an apply). A unit it was not handed
    // yet must come with that poll: then there is no tag.
    const at = changes.get(server.id) ?? 0;
    const pending = await pendingUnits(server.id);
    const reported = new Set(reports.map(unitTag));
    if (pending.every((u) => reported.has(unitTag(u)))) {
      const known = stateTag(pending);
      answered.set(server.id, { known, at });
      reply.header('berth-known', known);
    }
    return reply.code(204).send();
  });

  // Measurements, unlike reports, may name what left the server since (a mailbox deleted while
  // it was measured): each source records those of the accounts placed there and ignores the rest.
  app.post('/agent/v1/usage', { schema: { body: UsageBody } }, async (request, reply) => {
    const server = await serverOf(request);
    const { measurements } = request.body;
    await db.transaction(async (tx) => {
      for (const source of deps.sources) {
        const own = measurements.filter((m) => m.kind === source.kind);
        if (own.length > 0) await source.measured?.(tx, server.id, own);
      }
    });
    return reply.code(204).send();
  });

  // Runs of cron jobs its runner recorded: the answer names those stored (or of jobs it does not
  // hold any more), which the agent forgets; the rest it sends again.
  app.post('/agent/v1/cron-runs', { schema: { body: CronRunsBody } }, async (request, reply) => {
    const server = await serverOf(request);
    const stored = [];
    for (const source of deps.sources) if (source.runs) stored.push(...(await source.runs(db, server.id, request.body.runs)));
    return reply.code(200).send({ stored });
  });

  // Key logins its sshd accepted: the keys' `last_used_at`.
  app.post('/agent/v1/ssh-logins', { schema: { body: SshLoginsBody } }, async (request, reply) => {
    const server = await serverOf(request);
    for (const source of deps.sources) await source.logins?.(db, server.id, request.body.logins);
    return reply.code(204).send();
  });

  return app;
}

/** The fingerprint the enrolment command names, so the agent trusts only this listener's CA. */
export const caFingerprint = async (authority: () => Promise<CertificateAuthority>) =>
  certificateFingerprint((await authority()).certificate_pem);
