import { readdirSync, statSync } from 'node:fs';
import { Command } from 'commander';
import { create as tarCreate } from 'tar';
import type { Berth } from '@berth/sdk';
import { UsageError } from './errors.js';
import { byteProgress } from './progress.js';
import type { Runtime } from './runtime.js';

/** A site by id, or by its hostname. */
async function siteId(berth: Berth, site: string): Promise<string> {
  if (site.startsWith('site_')) return site;
  for await (const s of berth.list('/v1/sites', { query: { q: site } })) if (s.hostname === site.toLowerCase()) return s.id;
  throw new UsageError(`no site with the hostname ${site}`);
}

/** The directory as a tar.gz in memory (paths relative to it, owners dropped). */
async function pack(dir: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const stream = tarCreate({ gzip: true, cwd: dir, portable: true }, readdirSync(dir));
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The archive as a stream that moves the progress bar as the upload reads it. */
function counted(archive: Buffer, onRead: (n: number) => void): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      const chunk = archive.subarray(at, at + 256 * 1024);
      at += chunk.length;
      onRead(chunk.length);
      if (chunk.length) controller.enqueue(chunk);
      if (at >= archive.length) controller.close();
    },
  });
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
      const archive = await pack(dir);
      const progress = byteProgress('Uploading', archive.length);
      const post = berth.POST as unknown as (p: string, init: Record<string, unknown>) => Promise<{ data: unknown }>;
      const { data } = await post('/v1/sites/{site_id}/deployments', {
        params: { path: { site_id: id } },
        headers: { 'content-type': 'application/gzip', 'content-length': String(archive.length) },
        body: counted(archive, (n) => progress.add(n)),
        bodySerializer: (b: unknown) => b,
        duplex: 'half',
      });
      progress.stop();
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
