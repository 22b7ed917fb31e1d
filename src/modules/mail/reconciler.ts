import type { Db } from '../../db/client.js';
import { mailRoot } from '../../layout.js';
import { unseal } from '../../lib/sealed.js';
import { applyUnit } from '../../provisioning/apply-unit.js';
import type { MailDriver } from '../../provisioning/driver.js';
import type { MailDomainSpec } from '../../provisioning/render/mail.js';
import { domainNameTaken, signingKey } from '../domains/index.js';
import { loadMailUnit, mailUnits, type MailUnit } from './unit.js';

/** The unit as the driver sees it: only what the mail server needs. */
function mailDomainSpec(unit: MailUnit, root: string, dkim: MailDomainSpec['dkim']): MailDomainSpec {
  const accountActive = unit.domain_status === 'active' && unit.account_status === 'active';
  return {
    name: unit.name,
    root,
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
    catchAll: unit.catch_all,
    dkim,
  };
}

/**
 * The `mail.apply` job, like `dns.apply`: loads the domain's whole mail unit and hands it to
 * the driver, skipping a unit already applied at its generation. A domain that is gone or no
 * longer has mail is withdrawn. Failures are recorded on the domain and retried by the queue.
 */
export function mailReconciler(db: Db, driver: MailDriver, dataDir: string, dkimKey: Buffer) {
  /** The domain's signing key, unsealed for the signer alone. */
  const dkimOf = async (domainId: string) => {
    const key = await signingKey(db, domainId);
    return key ? { selector: key.selector, privateKeyPem: unseal(key.private_key_sealed, dkimKey) } : null;
  };
  return async (data: Record<string, unknown>): Promise<void> => {
    const id = String(data.domain_id);
    const name = String(data.name);
    const root = mailRoot(dataDir, String(data.account_id), name);
    // One apply of a mail domain at a time across processes (see dns.apply).
    await db.withSessionLock(`mail.apply:${id}`, async () => {
      const unit = await loadMailUnit(db, id);
      if (!unit) {
        await driver.removeDomain(name, root, { keepMaps: await domainNameTaken(db, name) });
        return;
      }
      const apply = () =>
        unit.mail_enabled
          ? dkimOf(id).then((dkim) => driver.applyDomain(mailDomainSpec(unit, root, dkim)))
          : driver.removeDomain(name, root, { keepMaps: false });
      await applyUnit(unit, apply, mailUnits.marks(db, id));
    });
  };
}
