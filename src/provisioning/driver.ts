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
