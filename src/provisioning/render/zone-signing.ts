import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dsContent, dsOf } from '../../lib/dnssec/ds.js';
import { removeTree } from '../../lib/remove-tree.js';
import { runCommand } from '../../lib/run-command.js';
import type { ZoneSigning } from './zone-file.js';

/** How long signatures are valid; the zone is signed again well before (on each change, and daily once 7 days are left). */
const VALIDITY_S = 30 * 24 * 3600;

/** The records a signed zone publishes at its apex besides its data: its keys, and CDS/CDNSKEY. */
function apexKeyRecords(name: string, signing: ZoneSigning): string[] {
  const lines: string[] = [];
  for (const k of signing.keys) lines.push(`@\t3600\tIN\tDNSKEY\t${k.flags} 3 ${k.algorithm} ${k.publicKey}`);
  if (signing.cds === 'publish')
    for (const k of signing.keys) {
      lines.push(`@\t3600\tIN\tCDS\t${dsContent(dsOf(name, k))}`);
      lines.push(`@\t3600\tIN\tCDNSKEY\t${k.flags} 3 ${k.algorithm} ${k.publicKey}`);
    }
  // RFC 8078 §4: the parent is asked to remove the DS.
  if (signing.cds === 'delete') lines.push('@\t3600\tIN\tCDS\t0 0 0 00', '@\t3600\tIN\tCDNSKEY\t0 3 0 AA==');
  return lines;
}

/**
 * `text` (a rendered zone file) signed with BIND's `dnssec-signzone`: each key written as the
 * K-files it reads into a directory of this process's own (0700), removed once signed with the
 * dsset file it writes there (`-d`; by default into the working directory); NSEC3 without salt
 * or extra iterations (RFC 9276); every key signs every set (`-z`: a CSK).
 */
export async function signZoneFile(name: string, text: string, signing: ZoneSigning, bin = 'dnssec-signzone'): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'berth-sign-'));
  try {
    const keyFiles: string[] = [];
    for (const k of signing.keys) {
      const base = `K${name}.+${String(k.algorithm).padStart(3, '0')}+${String(dsOf(name, k).key_tag).padStart(5, '0')}`;
      await writeFile(path.join(dir, `${base}.key`), `${name}. IN DNSKEY ${k.flags} 3 ${k.algorithm} ${k.publicKey}\n`);
      await writeFile(path.join(dir, `${base}.private`), k.privateKey, { mode: 0o600 });
      keyFiles.push(path.join(dir, base));
    }
    const unsigned = path.join(dir, 'zone');
    await writeFile(unsigned, `${text}${apexKeyRecords(name, signing).join('\n')}\n`);
    const denial = signing.denial === 'nsec3' ? ['-3', '-', '-H', '0'] : [];
    const signed = path.join(dir, 'zone.signed');
    await runCommand(
      bin,
      [
        '-q',
        '-z',
        '-O',
        'full',
        '-d',
        dir,
        '-K',
        dir,
        ...denial,
        '-e',
        `+${VALIDITY_S}`,
        '-o',
        name,
        '-f',
        signed,
        unsigned,
        ...keyFiles,
      ],
      'dnssec-signzone',
    );
    return await readFile(signed, 'utf8');
  } finally {
    await removeTree(dir);
  }
}
