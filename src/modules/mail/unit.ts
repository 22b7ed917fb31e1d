import type { Queryable } from '../../db/client.js';
import { unitState } from '../../db/unit-state.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { MailDomainContent } from '../../provisioning/render/mail.js';
import { handedToAgent, SERVED_STATUS } from '../servers/index.js';
import type { AddressRow } from './repo.js';

/**
 * A domain's mail apply unit: its mailboxes and forwarders, with what decides whether a
 * mailbox may log in (its own status, its domain's and its account's). Its generation and sync
 * state are a row of mail_units; a domain whose mail never changed has none (generation 1,
 * applied 0).
 */
export interface MailUnit {
  id: string;
  name: string;
  account_id: string;
  mail_enabled: boolean;
  catch_all: string | null;
  domain_status: string;
  account_status: string;
  /** The server that serves the account's mail. */
  mail_server_id: string;
  generation: number;
  applied_generation: number;
  addresses: Pick<
    AddressRow,
    'id' | 'kind' | 'address' | 'password_hash' | 'quota_mb' | 'status' | 'forward_to' | 'autoresponder'
  >[];
}

/**
 * Marks the unit of a domain changed, inside the caller's transaction: the generation moves on
 * and an apply job is queued with the change (the account id lets the job find the maildirs
 * even after the domain is gone).
 */
export async function touchMailUnit(
  tx: Queryable,
  jobs: JobQueue,
  domain: { id: string; name: string; account_id: string },
): Promise<void> {
  const r = await tx.query<{ server_id: string | null }>(
    `INSERT INTO mail_units (domain_id, generation) VALUES ($1, 2)
     ON CONFLICT (domain_id) DO UPDATE SET generation = mail_units.generation + 1, sync_state = 'pending'
     RETURNING (SELECT mail_server_id FROM accounts WHERE id = $2) AS server_id`,
    [domain.id, domain.account_id],
  );
  // Another server's agent pulls the change as the transaction commits, not after its apply job.
  const serverId = r.rows[0]?.server_id;
  if (serverId) await handedToAgent(tx, serverId);
  await jobs.send(tx, JOBS.mailApply, { domain_id: domain.id, name: domain.name, account_id: domain.account_id });
}

/** Every domain of an account that has mail (its suspension changes who may log in). */
export async function touchMailUnitsOfAccount(tx: Queryable, jobs: JobQueue, accountId: string): Promise<void> {
  const r = await tx.query<{ id: string; name: string; account_id: string }>(
    'SELECT id, name, account_id FROM domains WHERE account_id = $1 AND mail_enabled',
    [accountId],
  );
  for (const d of r.rows) await touchMailUnit(tx, jobs, d);
}

/**
 * The unit as committed: FOR SHARE waits for a change still being written (jobs/names.ts,
 * UNIT_KEYS). Its generation is read before what it renders, so that what is rendered is at
 * least as new as the generation recorded for it. The domain's row is locked first, in the order
 * every writer takes them (a domain's deletion, a new address): locking the unit's row first
 * deadlocked with a deletion whose cascade reached the unit while this waited for the domain
 * (test/api/unit-lock-order.test.ts).
 */
export async function loadMailUnit(db: Queryable, domainId: string): Promise<MailUnit | undefined> {
  const held = await db.query('SELECT 1 FROM domains WHERE id = $1 FOR SHARE', [domainId]);
  if (held.rows.length === 0) return undefined;
  const u = await db.query<Pick<MailUnit, 'generation' | 'applied_generation'>>(
    'SELECT generation, applied_generation FROM mail_units WHERE domain_id = $1 FOR SHARE',
    [domainId],
  );
  const d = await db.query<Omit<MailUnit, 'addresses' | 'generation' | 'applied_generation'>>(
    `SELECT d.id, d.name, d.account_id, d.mail_enabled, d.catch_all, d.status AS domain_status, ${SERVED_STATUS} AS account_status,
       a.mail_server_id
     FROM domains d JOIN accounts a ON a.id = d.account_id WHERE d.id = $1`,
    [domainId],
  );
  if (!d.rows[0]) return undefined;
  const r = await db.query<MailUnit['addresses'][number]>(
    `SELECT id, kind, address, password_hash, quota_mb, status, forward_to, autoresponder
     FROM mail_addresses WHERE domain_id = $1 ORDER BY address`,
    [domainId],
  );
  return { ...d.rows[0], ...(u.rows[0] ?? { generation: 1, applied_generation: 0 }), addresses: r.rows };
}

/** The mail units the agent of the server `$1` has yet to apply. */
const PENDING_ON_SERVER = `FROM mail_units u JOIN domains d ON d.id = u.domain_id JOIN accounts a ON a.id = d.account_id
  WHERE a.mail_server_id = $1 AND u.applied_generation < u.generation`;

/** Whether a server's agent has mail domains to apply (SQL, of the server `$1`). */
export const mailUnitsWaitingOnServer = `EXISTS (SELECT 1 ${PENDING_ON_SERVER})`;

/**
 * The mail units of another server whose changes its agent has yet to apply, whole, in three
 * queries however many there are (what `loadMailUnit` reads, without its locks).
 */
export async function pendingMailUnitsOnServer(db: Queryable, serverId: string): Promise<MailUnit[]> {
  const d = await db.query<Omit<MailUnit, 'addresses'>>(
    `SELECT d.id, d.name, d.account_id, d.mail_enabled, d.catch_all, d.status AS domain_status, ${SERVED_STATUS} AS account_status,
       a.mail_server_id, u.generation, u.applied_generation
     ${PENDING_ON_SERVER} ORDER BY u.domain_id`,
    [serverId],
  );
  if (d.rows.length === 0) return [];
  const r = await db.query<MailUnit['addresses'][number] & { domain_id: string }>(
    `SELECT domain_id, id, kind, address, password_hash, quota_mb, status, forward_to, autoresponder
     FROM mail_addresses WHERE domain_id = ANY($1::text[]) ORDER BY address`,
    [d.rows.map((x) => x.id)],
  );
  const units = new Map(d.rows.map((unit) => [unit.id, { ...unit, addresses: [] as MailUnit['addresses'] }]));
  for (const { domain_id, ...address } of r.rows) units.get(domain_id)?.addresses.push(address);
  return [...units.values()];
}

// A job is only ever sent with its unit's row (touchMailUnit), so the marks update that row; a
// domain deleted meanwhile took it along, and there is nothing left to mark.
export const mailUnits = unitState('mail_units', 'domain_id');

/** The unit as every mail server needs it, wherever it keeps the maildirs. */
export function mailDomainContent(unit: MailUnit, dkim: MailDomainContent['dkim']): MailDomainContent {
  const accountActive = unit.domain_status === 'active' && unit.account_status === 'active';
  return {
    name: unit.name,
    mailboxes: unit.addresses
      .filter((a) => a.kind === 'mailbox')
      .map((a) => ({
        id: a.id,
        address: a.address,
        passwordHash: a.password_hash as string,
        quotaMb: a.quota_mb as number,
        loginAllowed: accountActive && a.status === 'active',
        forwardTo: a.forward_to,
        autoresponder: a.autoresponder?.enabled
          ? {
              subject: a.autoresponder.subject,
              body: a.autoresponder.body,
              startsAt: a.autoresponder.starts_at,
              endsAt: a.autoresponder.ends_at,
            }
          : null,
      })),
    forwarders: unit.addresses
      .filter((a) => a.kind === 'forwarder')
      .map((a) => ({ address: a.address, destinations: a.forward_to })),
    deferred: unit.account_status === 'frozen',
    catchAll: unit.catch_all,
    dkim,
  };
}
