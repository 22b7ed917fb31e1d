import type { Queryable } from '../../db/client.js';
import { unseal } from '../../lib/sealed.js';
import type { AgentUnit, AgentUnitSource } from '../../provisioning/agent-units.js';
import type { MailDomainContent } from '../../provisioning/render/mail.js';
import { signingKey, signingKeys } from '../domains/index.js';
import { measuredInto, wakeAgent } from '../servers/index.js';
import { loadMailUnit, mailDomainContent, mailUnits, mailUnitsWaitingOnServer, pendingMailUnitsOnServer } from './unit.js';

type SealedKey = { selector: string; private_key_sealed: string } | undefined;

/** A signing key unsealed for the signer alone. */
const unsealed = (key: SealedKey, dkimKey: Buffer): MailDomainContent['dkim'] =>
  key ? { selector: key.selector, privateKeyPem: unseal(key.private_key_sealed, dkimKey) } : null;

/** The domain's signing key, unsealed for the signer alone. */
export const dkimOf = async (db: Queryable, dkimKey: Buffer, domainId: string) =>
  unsealed(await signingKey(db, domainId), dkimKey);

interface Removal {
  domain_id: string;
  account_id: string;
  name: string;
}

/** A domain gone from another server's mail: left for its agent until it reports it removed. */
export async function removeOnServer(db: Queryable, serverId: string, removal: Removal): Promise<void> {
  await db.query(
    `INSERT INTO mail_removals (domain_id, server_id, account_id, name) VALUES ($1, $2, $3, $4)
     ON CONFLICT (domain_id) DO NOTHING`,
    [removal.domain_id, serverId, removal.account_id, removal.name],
  );
  await wakeAgent(db, serverId);
}

// A removal is generation 1: a live unit handed to an agent is at least 2 (touchMailUnit), so
// the agent never takes one for the other.
const REMOVAL_GENERATION = 1;

/** The domains removed from the server `$1` whose removal its agent has yet to report. */
const REMOVALS_OF_SERVER = 'FROM mail_removals WHERE server_id = $1';

const recordMailboxBytes = measuredInto({
  table: 'mail_addresses',
  key: 'id',
  column: 'measured_bytes',
  role: 'mail',
  where: "t.kind = 'mailbox'",
});

/**
 * The mail domains of the accounts placed on a mail server, as its agent pulls them and reports
 * back: each changed domain whole (its DKIM key unsealed for that server's signer alone), and
 * the domains deleted since, first, so that a new domain of the same name is applied after.
 */
export function mailAgentUnits(dkimKey: Buffer): AgentUnitSource {
  return {
    kind: 'mail',
    waiting: `${mailUnitsWaitingOnServer} OR EXISTS (SELECT 1 ${REMOVALS_OF_SERVER})`,
    async pending(db, serverId) {
      const removals = await db.query<Removal>(`SELECT domain_id, account_id, name ${REMOVALS_OF_SERVER} ORDER BY domain_id`, [
        serverId,
      ]);
      const units: AgentUnit[] = removals.rows.map((r) => ({
        kind: 'mail',
        key: r.domain_id,
        generation: REMOVAL_GENERATION,
        spec: {
          account_id: r.account_id,
          enabled: false,
          removed: true,
          domain: { name: r.name, mailboxes: [], forwarders: [], deferred: false, catchAll: null, dkim: null },
        },
      }));
      const changed = await pendingMailUnitsOnServer(db, serverId);
      const keys = await signingKeys(
        db,
        changed.filter((u) => u.mail_enabled).map((u) => u.id),
      );
      for (const unit of changed) {
        const dkim = unsealed(keys.get(unit.id), dkimKey);
        units.push({
          kind: 'mail',
          key: unit.id,
          generation: unit.generation,
          spec: {
            account_id: unit.account_id,
            enabled: unit.mail_enabled,
            removed: false,
            domain: mailDomainContent(unit, dkim),
          },
        });
      }
      return units;
    },

    async report(db, serverId, report) {
      const unit = await loadMailUnit(db, report.key);
      if (!unit) {
        const removal = await db.query<{ server_id: string }>('SELECT server_id FROM mail_removals WHERE domain_id = $1', [
          report.key,
        ]);
        const owner = removal.rows[0]?.server_id;
        // Removed already (a report sent again) changes nothing.
        if (owner !== undefined && owner !== serverId) return 'foreign';
        if (report.generation > REMOVAL_GENERATION) return owner === undefined ? 'foreign' : 'future';
        if (report.error === undefined)
          await db.query('DELETE FROM mail_removals WHERE domain_id = $1 AND server_id = $2', [report.key, serverId]);
        return 'recorded';
      }
      if (unit.mail_server_id !== serverId) return 'foreign';
      if (report.generation > unit.generation) return 'future';
      const marks = mailUnits.marks(db, unit.id);
      await (report.error === undefined ? marks.applied(report.generation) : marks.failed(report.error));
      return 'recorded';
    },

    /** Each mailbox's files as measured by the server its account's mail is placed on. */
    measured: recordMailboxBytes,
  };
}
