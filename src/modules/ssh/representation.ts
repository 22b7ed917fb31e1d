import type { Queryable } from '../../db/client.js';
import { unixUser } from '../../provisioning/render/php-fpm.js';
import type { AccountRow } from '../accounts/index.js';
import { publishResourceEvent } from '../publishing/index.js';
import { findServerById } from '../servers/index.js';
import * as repo from './repo.js';
import type { AccountSsh, SshKey } from './schemas.js';
import { capAccess } from './unit.js';

export const toKey = (r: repo.KeyRow): SshKey => ({
  id: r.id,
  account_id: r.account_id,
  name: r.name,
  type: r.type,
  bits: r.bits,
  fingerprint_sha256: r.fingerprint_sha256,
  comment: r.comment,
  allowed_from: r.allowed_from,
  last_used_at: r.last_used_at,
  sync_state: r.sync_state,
  sync_error: r.sync_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

/**
 * The account's access (never more than its plan allows) and where to log in; `generation`
 * counts its changes (its events' version).
 */
export async function presentAccess(
  db: Queryable,
  account: AccountRow,
  port: number,
): Promise<{ shown: AccountSsh; generation: number }> {
  const row = await repo.findAccess(db, account.id);
  const server = await findServerById(db, account.web_server_id);
  const shown: AccountSsh = {
    account_id: account.id,
    access: capAccess(row?.access ?? 'disabled', account.plan_ssh_access),
    host: server?.ipv4 ?? server?.ipv6 ?? null,
    port,
    username: unixUser(account.username),
    sync_state: row?.sync_state ?? 'in_sync',
    sync_error: row?.sync_error ?? null,
    updated_at: row?.updated_at ?? account.created_at,
  };
  return { shown, generation: row?.generation ?? 0 };
}

/** `ssh_key.<action>` in the change's transaction, showing the key as it now is; the key shown. */
export async function keyEvent(tx: Queryable, action: 'created' | 'updated', id: string): Promise<SshKey> {
  const row = (await repo.findKeyById(tx, id)) as repo.KeyRow;
  const shown = toKey(row);
  await publishResourceEvent(tx, `ssh_key.${action}`, 'ssh_key', row, shown);
  return shown;
}
