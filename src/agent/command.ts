import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { bytesUsedUnder } from '../lib/disk.js';
import { driversFor } from '../provisioning/drivers/index.js';
import { enrol } from './enrol.js';
import { runAgent } from './run.js';
import { loadIdentity } from './state.js';

const USAGE = `berth agent: applies a hosting server's share of the desired state

  berth agent enrol --url URL --token TOKEN --ca-fingerprint sha256:HEX
      Makes this server's key pair, checks the control plane's CA against the fingerprint and
      trades the one-use token for a client certificate (kept under BERTH_DATA_DIR/agent).
  berth agent run
      Applies this server's units with the drivers BERTH_DRIVER_* choose, long-polling the
      control plane; re-applies the last units it kept first. Stops on SIGTERM or SIGINT.

Settings come from this machine's environment (BERTH_DATA_DIR, BERTH_DRIVER_DB, ...); the
agent never holds the control plane's database credentials.
`;

const VERSION = '0.1.0';

/** `berth agent ...`; resolves with the exit code (-1 while it runs). */
export async function runAgentCommand(argv: string[], config: Readonly<Config>): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || verb === '--help' || verb === 'help' || rest.includes('--help')) {
    process.stdout.write(USAGE);
    return verb ? 0 : 2;
  }
  if (verb === 'enrol') {
    const { values } = parseArgs({
      args: rest,
      options: { url: { type: 'string' }, token: { type: 'string' }, 'ca-fingerprint': { type: 'string' } },
    });
    if (!values.url || !values.token || !values['ca-fingerprint']) {
      process.stderr.write('berth agent enrol needs --url, --token and --ca-fingerprint\n');
      return 2;
    }
    const identity = await enrol({
      url: values.url,
      token: values.token,
      caFingerprint: values['ca-fingerprint'],
      dataDir: config.dataDir,
    });
    process.stdout.write(`enrolled as ${identity.server_id}; start it with: berth agent run\n`);
    return 0;
  }
  if (verb === 'run') {
    const identity = await loadIdentity(config.dataDir);
    if (!identity) {
      process.stderr.write('berth agent run: not enrolled here yet (berth agent enrol ...)\n');
      return 2;
    }
    const drivers = driversFor(config);
    const controller = new AbortController();
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => controller.abort());
    const log = (message: string) => process.stderr.write(`${new Date().toISOString()} ${message}\n`);
    log(`agent ${VERSION} of ${identity.server_id} polling ${identity.url}`);
    await runAgent(
      {
        dataDir: config.dataDir,
        identity,
        drivers: {
          database: drivers.db,
          web: drivers.web,
          php: drivers.php,
          mail: drivers.mail,
          cron: drivers.cron,
          ssh: drivers.ssh,
        },
        version: VERSION,
        diskBytesUsed: () => bytesUsedUnder(config.dataDir),
        measureEveryMs: config.databaseMeterMs,
        log,
      },
      controller.signal,
    );
    return 0;
  }
  process.stderr.write(`berth agent: unknown command ${verb}\n\n${USAGE}`);
  return 2;
}
