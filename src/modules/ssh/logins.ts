import type { Db } from '../../db/client.js';
import { periodic } from '../../jobs/periodic.js';
import type { SshDriver } from '../../provisioning/driver.js';
import { unixUser } from '../../provisioning/render/php-fpm.js';
import type { SshLogin } from '../../provisioning/render/ssh.js';
import { LOCAL_SERVER_ID } from '../servers/index.js';
import * as repo from './repo.js';

/**
 * The key logins a server's sshd accepted: each key's `last_used_at` moves on. A login counts
 * only for a key of an account whose web server that is and whose Unix user logged in.
 */
export async function recordLogins(db: Db, serverId: string, logins: SshLogin[]): Promise<void> {
  if (!logins.length) return;
  const keys = await repo.keysByFingerprint(db, serverId, [...new Set(logins.map((l) => l.fingerprint_sha256))]);
  for (const login of logins)
    for (const key of keys)
      if (key.fingerprint_sha256 === login.fingerprint_sha256 && unixUser(key.username) === login.user)
        await repo.markUsed(db, key.id, login.at);
}

/** Each process reads the logins of this server's sshd every `intervalMs`. */
export const loginCollector = (db: Db, driver: SshDriver, intervalMs: number, onError: (err: unknown) => void) =>
  periodic(async () => recordLogins(db, LOCAL_SERVER_ID, await driver.collectLogins()), intervalMs, onError);
