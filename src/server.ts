import type { AddressInfo } from 'node:net';
import { buildApp, listenAgents } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { DirLockedError } from './db/lock.js';
import { messageOf } from './lib/errors.js';
import { bootstrapOperator } from './modules/tokens/service.js';
import { openMigratedDb } from './runtime.js';

const SHUTDOWN_DEADLINE_MS = 10_000;

/** Entry: config → database → migrations → bootstrap → app → listen; clean shutdown on SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  const db = await openMigratedDb(config);
  const generated = await bootstrapOperator(db, config.bootstrapToken);
  if (generated) {
    // Printed once to the terminal, never logged: it is the only copy of the operator's secret.
    process.stdout.write(
      `\nBerth created the operator. Its API token (shown only this once):\n\n  ${generated}\n\n` +
        'Store it now. More tokens: POST /v1/tokens, or `npm run berth -- token create --operator`.\n\n',
    );
  }
  const app = await buildApp({ config, db });
  let stopping = false;
  const stop = async (signal: string) => {
    // A second signal (a process group gets one, and a wrapper may forward another) changes nothing.
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'stopping: finishing requests in flight and running job steps');
    // Whatever still runs then is cut off, as a crash would (queued work resumes at the next start).
    setTimeout(() => {
      app.log.error('stopping took longer than 10 s; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    try {
      await app.close();
      await db.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'unclean shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  await app.listen({ host: config.host, port: config.port });
  await listenAgents(app, config);
  if (!config.mailHost && !config.webIpv4 && !config.webIpv6)
    app.log.warn(
      'no BERTH_MAIL_HOST and no BERTH_WEB_IPV4/IPV6: mail-enabled domains get no MX (it would name a host without an address)',
    );
  const { port } = app.server.address() as AddressInfo;
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  process.stdout.write(
    `Berth is serving ${base} (API reference: ${base}/docs)\n` +
      (generated ? `Try it: curl -H "Authorization: Bearer ${generated}" ${base}/v1/me\n` : ''),
  );
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof DirLockedError) {
    process.stderr.write(`berth: ${err.message}\n`);
  } else {
    process.stderr.write(`berth: could not start: ${messageOf(err)}\n`);
  }
  process.exit(1);
});
