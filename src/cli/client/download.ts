import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, renameSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Command } from 'commander';
import { byteProgress } from './progress.js';
import type { Runtime } from './runtime.js';

/**
 * `berth backups download ID -o FILE`: streamed to `FILE.part` with a progress bar; a `.part`
 * left by a broken download is resumed with `Range`. The whole file is checked against
 * `Repr-Digest` (SHA-256) before it takes its name: hashed as it arrives, after the bytes a
 * resumed download already had.
 */
export function downloadCommand(rt: Runtime): Command {
  return new Command('download')
    .description("Download a backup's archive, resuming a broken download")
    .argument('<backup>', "the backup's id")
    .requiredOption('-o, --output <file>', 'where to write the tar.gz')
    .action(async (backup: string, o: { output: string }) => {
      const part = `${o.output}.part`;
      const have = statSync(part, { throwIfNoEntry: false })?.size ?? 0;
      const { response } = await rt.berth().GET('/v1/backups/{backup_id}/download', {
        params: { path: { backup_id: backup } },
        headers: have > 0 ? { range: `bytes=${have}-` } : {},
        parseAs: 'stream',
      });
      const resumed = response.status === 206;
      const start = resumed ? have : 0;
      const total = Number(
        /\/(\d+)$/.exec(response.headers.get('content-range') ?? '')?.[1] ?? response.headers.get('content-length'),
      );
      if (resumed) rt.say(`Resuming at ${start} bytes.`);
      const hash = createHash('sha256');
      if (resumed) for await (const chunk of createReadStream(part, { end: start - 1 })) hash.update(chunk as Buffer);
      const progress = byteProgress('Downloading', total, start);
      const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
      body.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        progress.add(chunk.length);
      });
      await pipeline(body, createWriteStream(part, { flags: resumed ? 'a' : 'w', mode: 0o600 }));
      progress.stop();
      const digest = /sha-256=:([^:]+):/.exec(response.headers.get('repr-digest') ?? '')?.[1];
      if (digest && hash.digest('base64') !== digest)
        throw new Error(`${part} does not match the archive's SHA-256: delete it and download again`);
      renameSync(part, o.output);
      rt.say(`Saved ${o.output}${digest ? ' (SHA-256 checked)' : ''}.`);
    });
}
