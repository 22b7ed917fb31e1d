import { createWriteStream, readdirSync, statSync } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Berth } from '@berth/sdk';
import { Command } from 'commander';
import { UsageError } from './errors.js';
import { byteProgress } from './progress.js';
import type { Runtime } from './runtime.js';

/** A site by id, or by its hostname. */
async function siteId(berth: Berth, site: string): Promise<string> {
  if (site.startsWith('site_')) return site;
  for await (const s of berth.list('/v1/sites', { query: { q: site } })) if (s.hostname === site.toLowerCase()) return s.id;
  throw new UsageError(`no site with the hostname ${site}`);
}

/**
 * The directory as a tar.gz file in a private temporary directory (paths relative to it, owners
 * dropped), so a site of any size is sent from disk with its length known (the server refuses an
 * archive too large before reading it) and never held in memory.
 */
async function pack(dir: string, scratch: string): Promise<{ file: string; bytes: number }> {
  const file = path.join(scratch, 'site.tar.gz');
  // tar and what it needs load only here: other commands start without them.
  const { create: tarCreate } = await import('tar');
  await pipeline(
    tarCreate({ gzip: true, cwd: dir, portable: true }, readdirSync(dir)) as unknown as NodeJS.ReadableStream,
    createWriteStream(file, { mode: 0o600 }),
  );
  return { file, bytes: statSync(file).size };
}

/**
 * The archive as a stream that moves the progress bar as the upload reads it: 1 MiB read from the
 * file each time the upload asks for more, so no more than that waits in memory.
 */
function counted(file: string, onRead: (n: number) => void): ReadableStream<Uint8Array> {
  let handle: FileHandle;
  return new ReadableStream(
    {
      async start() {
        handle = await open(file, 'r');
      },
      async pull(controller) {
        const { bytesRead, buffer } = await handle.read({ buffer: Buffer.allocUnsafe(1 << 20) });
        onRead(bytesRead);
        if (bytesRead > 0) return controller.enqueue(buffer.subarray(0, bytesRead));
        await handle.close();
        controller.close();
      },
      async cancel() {
        await handle.close();
      },
    },
    { highWaterMark: 0 },
  );
}

/** `berth deploy SITE DIR`: packs DIR, uploads it with a progress bar, and waits until it is live. */
export function deployCommand(rt: Runtime): Command {
  return new Command('deploy')
    .description('Deploy a directory to a site and wait until it is live')
    .argument('<site>', "the site's id or hostname")
    .argument('<dir>', 'the directory to publish (its contents become the document root)')
    .option('--no-wait', 'return once uploaded, without waiting for it to go live')
    .action(async (site: string, dir: string, o: { wait: boolean }) => {
      if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`${dir} is not a directory`);
      const berth = rt.berth();
      const id = await siteId(berth, site);
      const scratch = await mkdtemp(path.join(tmpdir(), 'berth-deploy-'));
      let data: unknown;
      try {
        const archive = await pack(dir, scratch);
        const progress = byteProgress('Uploading', archive.bytes);
        const post = berth.POST as unknown as (p: string, init: Record<string, unknown>) => Promise<{ data: unknown }>;
        ({ data } = await post('/v1/sites/{site_id}/deployments', {
          params: { path: { site_id: id } },
          headers: { 'content-type': 'application/gzip', 'content-length': String(archive.bytes) },
          body: counted(archive.file, (n) => progress.add(n)),
          bodySerializer: (b: unknown) => b,
          duplex: 'half',
          // Both keep a copy of the whole archive in memory, to send it again: a retry (the SDK
          // clones the request) and a redirect followed (fetch clones it unless redirects are errors).
          retry: false,
          redirect: 'error',
        }));
        progress.stop();
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
      const deployment = data as { id: string; operation: { id: string } };
      if (!o.wait) return rt.print(deployment, ['id', 'status']);
      rt.say(`Deployment ${deployment.id} uploaded; waiting until it is live…`);
      await berth.operations.wait(deployment.operation.id);
      const { data: live } = await berth.GET('/v1/sites/{site_id}/deployments/{deployment_id}', {
        params: { path: { site_id: id, deployment_id: deployment.id } },
      });
      rt.print(live, ['id', 'status', 'size_bytes', 'file_count']);
    });
}
