import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { accountHome } from '../layout.js';
import { removeTree } from '../lib/remove-tree.js';

/**
 * The account's files of the roles a server gives up (a withdrawal, on an agent's server or the
 * control plane's own): a web server's share is everything in its home but `mail/`, a mail
 * server's `mail/`. A server withdrawn from one role of two (a move of the account's mail alone)
 * keeps the other's; the home goes once nothing is left in it.
 */
export async function removeWithdrawnFiles(dataDir: string, accountId: string, roles: readonly string[]): Promise<void> {
  const home = accountHome(dataDir, accountId);
  const names = await readdir(home).catch(() => []);
  for (const name of names)
    if (name === 'mail' ? roles.includes('mail') : roles.includes('web')) await removeTree(path.join(home, name));
  if ((await readdir(home).catch(() => ['?'])).length === 0) await removeTree(home);
}
