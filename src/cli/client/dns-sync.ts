import { readFileSync } from 'node:fs';
import { ifMatch } from '@berth/sdk';
import { Command } from 'commander';
import { UsageError } from './errors.js';
import type { Runtime } from './runtime.js';

type Rec = { name: string; type: string; ttl: number; content: string };
type Diff = { created: Rec[]; updated: Rec[]; deleted: Rec[]; unchanged: number };

const line = (sign: string, r: Rec) => `${sign} ${r.name} ${r.ttl} ${r.type} ${r.content}`;
/** The diff as people read one: `+` created, `~` new TTL, `-` deleted. */
const renderDiff = (d: Diff) =>
  [...d.created.map((r) => line('+', r)), ...d.updated.map((r) => line('~', r)), ...d.deleted.map((r) => line('-', r))].join(
    '\n',
  );

/**
 * `berth dns sync DOMAIN --file zone.txt`: the zone's unmanaged records become the file's. The
 * diff is computed by the server (`dry_run`), shown, and applied after confirmation with
 * `If-Match` on the zone version it was computed against: a zone changed in between is a 412,
 * never a silent overwrite.
 */
export function dnsCommand(rt: Runtime): Command {
  const dns = new Command('dns').description('Zones as files');
  dns
    .command('sync <domain>')
    .description("Make a zone's records those of a zone file, showing the difference first")
    .requiredOption('--file <path>', 'an RFC 1035 zone file')
    .option('--dry-run', 'show the difference and change nothing')
    .option('-y, --yes', 'apply without asking')
    .action(async (domain: string, o: { file: string; dryRun?: boolean; yes?: boolean }) => {
      let text: string;
      try {
        text = readFileSync(o.file, 'utf8');
      } catch (err) {
        throw new UsageError(`cannot read ${o.file}: ${(err as Error).message}`);
      }
      const berth = rt.berth();
      const { data: current } = await berth.GET('/v1/domains/{domain}', { params: { path: { domain } } });
      const send = (dryRun: boolean) =>
        berth.PUT('/v1/domains/{domain}/zone', {
          params: { path: { domain }, query: { dry_run: dryRun } },
          headers: { ...ifMatch(current as { version: number }), 'content-type': 'text/dns' },
          body: text as never,
          bodySerializer: (b: unknown) => b as string,
        });
      const diff = (await send(true)).data as Diff;
      const changes = diff.created.length + diff.updated.length + diff.deleted.length;
      if (rt.format() === 'json' && (o.dryRun || changes === 0)) return rt.print(diff);
      if (changes === 0) return rt.say(`${domain}: nothing to change (${diff.unchanged} records already match).`);
      rt.say(renderDiff(diff));
      rt.say(
        `${diff.created.length} to create, ${diff.updated.length} to update, ${diff.deleted.length} to delete, ${diff.unchanged} unchanged.`,
      );
      if (o.dryRun) return;
      if (!(await rt.confirm(`Apply to ${domain}?`, o.yes))) throw new UsageError('not confirmed; nothing was changed');
      const applied = (await send(false)).data as Diff & { serial: number };
      if (rt.format() === 'json') rt.print(applied);
      else rt.say(`Applied: serial ${applied.serial}.`);
    });
  return dns;
}
