import path from 'node:path';
import type { Queryable } from '../../db/client.js';
import { mailRoot } from '../../layout.js';
import { directoryBytes } from '../../lib/disk.js';
import { publishResourceEvent } from '../publishing/index.js';
import type { AddressRow } from './repo.js';
import { NO_AUTORESPONDER } from './rules.js';
import type { Forwarder, Mailbox } from './schemas.js';

/** The API representations of mailboxes and forwarders (never a password or its hash). */
export const toMailbox = (r: AddressRow, usageBytes: number): Mailbox => ({
  id: r.id,
  address: r.address,
  domain_id: r.domain_id,
  account_id: r.account_id,
  quota_mb: r.quota_mb as number,
  usage_bytes: usageBytes,
  status: r.status,
  forward_to: r.forward_to,
  autoresponder: r.autoresponder ?? NO_AUTORESPONDER,
  sync_state: r.sync_state,
  sync_error: r.sync_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

export const toForwarder = (r: AddressRow): Forwarder => ({
  id: r.id,
  address: r.address,
  domain_id: r.domain_id,
  account_id: r.account_id,
  destinations: r.forward_to,
  sync_state: r.sync_state,
  sync_error: r.sync_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

/**
 * Bytes in the mailbox's home (its Maildir and Sieve script): measured from the files here, or
 * as the agent of the mail server that holds them last measured them.
 */
export const mailboxUsage = async (dataDir: string, r: AddressRow): Promise<number> =>
  r.measured_bytes ?? directoryBytes(path.join(mailRoot(dataDir, r.account_id, r.domain_name), r.id));

export const presentAddress = async (dataDir: string, r: AddressRow): Promise<Mailbox | Forwarder> =>
  r.kind === 'mailbox' ? toMailbox(r, await mailboxUsage(dataDir, r)) : toForwarder(r);

/** `email.<action>` or `email_forwarder.<action>` (the API's names), written in the change's transaction. */
export async function addressEvent(tx: Queryable, action: string, r: AddressRow, data: Mailbox | Forwarder): Promise<void> {
  const type = r.kind === 'mailbox' ? 'email' : 'email_forwarder';
  await publishResourceEvent(tx, `${type}.${action}`, type, r, data);
}
