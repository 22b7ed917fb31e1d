import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AgentTask } from '../provisioning/agent-units.js';
import type { DatabaseDriver } from '../provisioning/driver.js';

export interface TaskDeps {
  dataDir: string;
  database: DatabaseDriver;
  /** The task's input, as the control plane sends it. */
  input: () => Promise<Readable>;
  /** Sends the task's output to the control plane. */
  output: (body: Readable) => Promise<void>;
}

/**
 * One task, its file kept under the agent's own directory (0600: a dump holds the account's
 * data) only while it runs: a dump made with the local driver and streamed to the control
 * plane, or a dump fetched from it and loaded.
 */
export async function runTask(o: TaskDeps, id: string, task: AgentTask): Promise<void> {
  const dir = path.join(o.dataDir, 'agent', 'tasks');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${path.basename(id)}.sql`);
  try {
    if (task.action === 'database.dump') {
      await o.database.dump(task.database, file);
      await o.output(createReadStream(file));
    } else {
      await pipeline(await o.input(), createWriteStream(file, { mode: 0o600 }));
      await o.database.load(task.database, file);
    }
  } finally {
    await rm(file, { force: true });
  }
}
