import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AgentUnit } from '../provisioning/agent-units.js';

/**
 * What an agent keeps under its own data directory (`agent/`): its private key, its client
 * certificate, the CA it trusts, where the control plane is, and its last units (so a reboot
 * re-applies them before the control plane answers). Every file is 0600: the key, and the
 * units' password hashes, are the server's own secrets.
 */
export interface Identity {
  url: string;
  server_id: string;
  key_pem: string;
  certificate_pem: string;
  ca_pem: string;
}

const dirOf = (dataDir: string) => path.join(dataDir, 'agent');

async function writePrivate(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp`;
  await writeFile(tmp, text, { mode: 0o600 });
  await rename(tmp, file);
}

export const saveIdentity = (dataDir: string, identity: Identity) =>
  writePrivate(path.join(dirOf(dataDir), 'identity.json'), `${JSON.stringify(identity, null, 2)}\n`);

export async function loadIdentity(dataDir: string): Promise<Identity | null> {
  try {
    return JSON.parse(await readFile(path.join(dirOf(dataDir), 'identity.json'), 'utf8')) as Identity;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The units last handed over, and the generation of each that was applied here. */
export interface CachedUnits {
  units: AgentUnit[];
  applied: Record<string, number>;
}

export const saveUnits = (dataDir: string, cached: CachedUnits) =>
  writePrivate(path.join(dirOf(dataDir), 'units.json'), JSON.stringify(cached));

export async function loadUnits(dataDir: string): Promise<CachedUnits> {
  try {
    return JSON.parse(await readFile(path.join(dirOf(dataDir), 'units.json'), 'utf8')) as CachedUnits;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { units: [], applied: {} };
    throw err;
  }
}
