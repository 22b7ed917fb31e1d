/**
 * A worker process for the crash tests: opens the database of DATABASE_URL (or the PGlite data
 * directory BERTH_DATA_DIR), takes jobs of the queue named in argv[2], says `holding <data>` on
 * stdout for each, and never finishes one — until the test kills it with SIGKILL.
 */
import { openDb } from '../../src/db/client.js';
import { PgBossQueue } from '../../src/jobs/queue.js';

const queue = process.argv[2] as string;
const db = await openDb({ databaseUrl: process.env.DATABASE_URL || null, dataDir: process.env.BERTH_DATA_DIR ?? '' });
const jobs = new PgBossQueue(db, { runWorkers: true, onError: (err) => console.error(err) });
await jobs.work(queue, async (data) => {
  console.log(`holding ${JSON.stringify(data)}`);
  await new Promise(() => undefined);
});
await jobs.start();
console.log('ready');
