import { type Contribution, type AccountShare, syncErrorGauge } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import { mailRoot } from '../../layout.js';
import type { MailDriver } from '../../provisioning/driver.js';
import type { ServiceDeps } from '../deps.js';
import { dkimSealKey, domainNamesOfAccount, zonesOfAccount } from '../domains/index.js';
import { dkimOf, mailAgentUnits } from './agent-units.js';
import { mailBackupPart } from './backup.js';
import { mailReconciler } from './reconciler.js';
import { mailRoutes } from './routes.js';
import { mailSchemas } from './schemas.js';
import { mailService } from './service.js';
import { loadMailUnit, mailDomainContent, mailUnits } from './unit.js';

/** Mailboxes and forwarders, the mail apply unit, and mail's part of backups. */
export function mailModule(svc: ServiceDeps, driver: MailDriver) {
  // DKIM keys are sealed (by domains) with this; the signer gets them in the clear, 0600.
  const dkimKey = dkimSealKey(svc.config);
  const contribution: Contribution = {
    schemas: mailSchemas,
    routes: (app) => mailRoutes(app, mailService(svc)),
    workers: [
      {
        queue: JOBS.mailApply,
        run: mailReconciler(svc.db, driver, svc.config.dataDir, dkimKey),
      },
    ],
    gauges: [syncErrorGauge('mail', () => mailUnits.countErrors(svc.db))],
  };
  return {
    contribution,
    backupPart: mailBackupPart(svc),
    share: {
      role: 'mail',
      applied: async (accountId) =>
        (await mailUnits.unapplied(svc.db, 't.domain_id IN (SELECT id FROM domains WHERE account_id = $1)', accountId)) === 0,
      // Its mail domains leave this server's maps, with their Maildirs.
      async withdrawLocal(account) {
        for (const name of await domainNamesOfAccount(svc.db, account.id))
          await driver.removeDomain(name, mailRoot(svc.config.dataDir, account.id, name), { keepMaps: false });
      },
      // Its mail domains take mail as before and relay it to the new mail server.
      async forwardLocal(accountId, to) {
        for (const { id, name } of await zonesOfAccount(svc.db, accountId)) {
          const unit = await loadMailUnit(svc.db, id);
          if (!unit?.mail_enabled) continue;
          const content = mailDomainContent(unit, await dkimOf(svc.db, dkimKey, id));
          await driver.applyDomain({ ...content, relay: to, root: mailRoot(svc.config.dataDir, accountId, name) });
        }
      },
    } satisfies AccountShare,
    agentUnits: mailAgentUnits(dkimKey),
    oldestPending: (q: Queryable, serverIds: string[]) =>
      mailUnits.oldestPendingOn(
        q,
        serverIds,
        '(SELECT mail_server_id FROM accounts WHERE id = (SELECT account_id FROM domains WHERE id = t.domain_id))',
      ),
  };
}
