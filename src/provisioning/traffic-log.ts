import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from './atomic-write.js';

/** Bytes a site sent on one UTC day (`YYYY-MM-DD`), as its web server logged them. */
export interface SiteTraffic {
  site_id: string;
  day: string;
  bytes: number;
}

interface Counted {
  /** How far each log file (by inode, which a rename keeps) has been read. */
  offsets: Record<string, number>;
  /** Each site's bytes per day, for the days still kept. */
  totals: Record<string, Record<string, number>>;
}

export interface TrafficLogOptions {
  /** Asks the web server to open its logs again (after one is renamed away). */
  reopen: () => Promise<void>;
  /** A log larger than this is renamed to `.log.1` and the web server told to reopen. */
  rotateBytes?: number;
  /** Days kept counting: a line read later than this after its day is not counted. */
  keepDays?: number;
  now?: () => Date;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
// nginx's `combined` format: `addr - user [28/Nov/2026:23:10:00 +0000] "request" status bytes "referer" "agent"`.
// A quote inside the request is logged as \x22, so the request never holds one.
const COMBINED = /\[(\d{2})\/(\w{3})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-]\d{4})\] "[^"]*" \d{3} (\d+)/;
const READ_CHUNK = 4 << 20;
const DAY_MS = 86_400_000;

/** The UTC day and the bytes of one `combined` line, or null for a line of another shape. */
export function parseCombined(line: string): { day: string; bytes: number } | null {
  const m = COMBINED.exec(line);
  if (!m) return null;
  const [, d, mon, y, hh, mm, ss, zone, bytes] = m as unknown as string[];
  const month = MONTHS.indexOf(mon as string);
  if (month < 0) return null;
  const offsetMin = (zone!.startsWith('-') ? -1 : 1) * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(3)));
  const utc = Date.UTC(Number(y), month, Number(d), Number(hh), Number(mm), Number(ss)) - offsetMin * 60_000;
  return { day: new Date(utc).toISOString().slice(0, 10), bytes: Number(bytes) };
}

/**
 * Counts what each site sent from the access logs its server blocks write (`<site>.log` in
 * `dir`, nginx's `combined` format, the response body's bytes as cPanel and AWStats count them).
 * Each file is read on from where the last count stopped, whole lines only; the offsets and the
 * totals are one file written atomically, so a process killed anywhere counts every line once.
 * The totals, not what was added, are reported: sending them again changes nothing.
 *
 * A log past `rotateBytes` is renamed to `<site>.log.1` and the web server told to reopen; lines
 * it writes there before it has are still read (the offset follows the inode), and the old file
 * is removed once read to its end and quiet for five minutes.
 */
export class TrafficLog {
  private readonly stateFile: string;

  constructor(
    private readonly dir: string,
    private readonly o: TrafficLogOptions,
  ) {
    this.stateFile = path.join(dir, 'counted.json');
  }

  async collect(): Promise<SiteTraffic[]> {
    const now = (this.o.now ?? (() => new Date()))();
    await mkdir(this.dir, { recursive: true, mode: 0o750 });
    const state = JSON.parse(await readFile(this.stateFile, 'utf8').catch(() => '{"offsets":{},"totals":{}}')) as Counted;
    const oldest = new Date(now.getTime() - ((this.o.keepDays ?? 3) - 1) * DAY_MS).toISOString().slice(0, 10);
    const offsets: Record<string, number> = {};
    const rotate: string[] = [];
    const quiet: string[] = [];
    const names = (await readdir(this.dir)).sort().reverse();
    let reopen = false;
    for (const name of names) {
      const site = /^(.+)\.log(\.1)?$/.exec(name);
      if (!site) continue;
      const file = path.join(this.dir, name);
      const { ino, size, mtimeMs } = await stat(file);
      const from = Math.min(state.offsets[ino] ?? 0, size);
      if (site[2] && from === size && now.getTime() - mtimeMs > 300_000) {
        quiet.push(file);
        continue;
      }
      offsets[ino] = await this.count(file, from, size, (state.totals[site[1]!] ??= {}), oldest);
      // Renamed, but the server was never told (killed before it could be): it still writes there.
      if (site[2] && !names.includes(`${site[1]}.log`)) reopen = true;
      if (!site[2] && size > (this.o.rotateBytes ?? 64 << 20)) rotate.push(file);
    }
    for (const [id, days] of Object.entries(state.totals)) {
      for (const day of Object.keys(days)) if (day < oldest) delete days[day];
      if (Object.keys(days).length === 0) delete state.totals[id];
    }
    // A quiet old log added nothing this time; it goes before the offsets forget its inode.
    await Promise.all(quiet.map((f) => rm(f, { force: true })));
    await writeFileAtomic(this.stateFile, JSON.stringify({ offsets, totals: state.totals }), 0o600);
    for (const file of rotate)
      if (!names.includes(`${path.basename(file)}.1`)) {
        await rename(file, `${file}.1`);
        reopen = true;
      }
    if (reopen) await this.o.reopen();
    return Object.entries(state.totals).flatMap(([site_id, days]) =>
      Object.entries(days).map(([day, bytes]) => ({ site_id, day, bytes })),
    );
  }

  /** Adds the whole lines of `file` from `from` on to `totals`; returns where they end. */
  private async count(file: string, from: number, size: number, totals: Record<string, number>, oldest: string) {
    const handle = await open(file, 'r');
    try {
      let offset = from;
      while (offset < size) {
        const chunk = Buffer.alloc(Math.min(size - offset, READ_CHUNK));
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, offset);
        // Whole lines only: a line still being written is read next time.
        const end = chunk.subarray(0, bytesRead).lastIndexOf(10) + 1;
        if (end === 0) break;
        for (const line of chunk.subarray(0, end).toString('utf8').split('\n')) {
          const hit = parseCombined(line);
          if (hit && hit.day >= oldest) totals[hit.day] = (totals[hit.day] ?? 0) + hit.bytes;
        }
        offset += end;
      }
      return offset;
    } finally {
      await handle.close();
    }
  }
}
