import type { SiteSpec } from './render/nginx.js';
import type { MailDomainSpec } from './render/mail.js';
import type { Zone } from './render/zone-file.js';

/**
 * A DNS driver makes a zone served as given: the whole zone each time (applies are
 * idempotent; re-applying an unchanged zone is harmless). `embedded` renders files only;
 * real drivers (PowerDNS) implement the same interface.
 */
export interface DnsDriver {
  readonly name: string;
  applyZone(zone: Zone): Promise<void>;
  removeZone(name: string): Promise<void>;
}

/**
 * A mail driver makes one domain's mailboxes and forwarders real: login, delivery, quota,
 * aliases, autoresponders. `applyDomain` gets the whole unit (idempotent); `removeDomain`
 * withdraws a domain that is gone, and with `keepMaps` leaves its maps to a new domain of the
 * same name (only the old account's maildirs go).
 */
export interface MailDriver {
  readonly name: string;
  applyDomain(domain: MailDomainSpec): Promise<void>;
  removeDomain(name: string, root: string, options: { keepMaps: boolean }): Promise<void>;
}

/**
 * A web driver serves a site: its server block (hostnames, document root, suspension page).
 * `applySite` gets the whole unit (idempotent); `removeSite` stops serving it.
 */
export interface WebDriver {
  readonly name: string;
  applySite(site: SiteSpec): Promise<void>;
  removeSite(id: string): Promise<void>;
}
