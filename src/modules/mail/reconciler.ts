import type { Db } from '../../db/client.js';
import { mailRoot } from '../../layout.js';
import { applyUnit } from '../../provisioning/apply-unit.js';
import type { MailDriver } from '../../provisioning/driver.js';
import { findAccountById } from '../accounts/index.js';
import { domainNameTaken } from '../domains/index.js';
import { handedToAgent, LOCAL_SERVER_ID } from '../servers/index.js';
import { dkimOf, removeOnServer } from './agent-units.js';
import { loadMailUnit, mailDomainContent, mailUnits } from './unit.js';

/**
 * Runs `fn` while no apply of the mail domain runs, in any process: what changes a domain's
 * files beside its apply (a restore putting mailboxes back) takes it too.
 */
export const withMailDomain = <T>(db: Db, domainId: string, fn: () => Promise<T>): Promise<T> =>
  db.withSessionLock(`mail.apply:${domainId}`, fn);

/**
 * The `mail.apply` job, like `dns.apply`: loads the domain's whole mail unit and hands it to
 * the driver, skipping a unit already applied at its generation. A domain that is gone or no
 * longer has mail is withdrawn. Failures are recorded on the domain and retried by the queue.
 * Another server's unit is its agent's: the job only wakes its long-poll (and a domain gone
 * from it leaves a removal for the agent to pick up).
 */
export function mailReconciler(db: Db, driver: MailDriver, dataDir: string, dkimKey: Buffer) {
  return async (data: Record<string, unknown>): Promise<void> => {
    const id = String(data.domain_id);
    const name = String(data.name);
    const accountId = String(data.account_id);
    const root = mailRoot(dataDir, accountId, name);
    // One apply of a mail domain at a time across processes (see dns.apply).
    await withMailDomain(db, id, async () => {
      const unit = await loadMailUnit(db, id);
      if (!unit) {
        // A terminated account's mail elsewhere goes with its withdrawal; a live one's domain by a removal.
        const serverId = (await findAccountById(db, accountId))?.mail_server_id ?? LOCAL_SERVER_ID;
        if (serverId !== LOCAL_SERVER_ID) return removeOnServer(db, serverId, { domain_id: id, account_id: accountId, name });
        await driver.removeDomain(name, root, { keepMaps: await domainNameTaken(db, name) });
        return;
      }
      if (await handedToAgent(db, unit.mail_server_id)) return;
      const apply = () =>
        unit.mail_enabled
          ? dkimOf(db, dkimKey, id).then((dkim) => driver.applyDomain({ ...mailDomainContent(unit, dkim), root }))
          : driver.removeDomain(name, root, { keepMaps: false });
      await applyUnit(unit, apply, mailUnits.marks(db, id));
    });
  };
}
