import type { Scope } from '../../auth/scopes.js';
import type { Queryable } from '../../db/client.js';

/** The domain as its dependents see it. */
interface DomainRef {
  id: string;
  name: string;
  account_id: string;
}

/** One thing that uses a domain, as a 409 `in_use` lists it. */
export type UsedBy = { type: string; id: string } & Record<string, string>;

/** Resources that live on a domain (sites, mail addresses): listed when they hold it, deleted with it on cascade. */
export interface DomainDependent {
  /** The scope deleting them with the domain needs. */
  scope: Scope;
  /** What holds the domain now, under the zone lock. */
  holders(tx: Queryable, domain: DomainRef): Promise<UsedBy[]>;
  /** Deletes them with the domain (cascade=true), each with its own event. */
  release(tx: Queryable, domain: DomainRef): Promise<void>;
}

/**
 * What the modules built on domains contribute (app.ts hands them in), so domains imports none
 * of them: the sites on a domain, and its mail, which also re-renders when the domain's mail is
 * switched or the domain suspended.
 */
export interface DomainHooks {
  sites: DomainDependent;
  mail: DomainDependent & {
    changed(tx: Queryable, domain: DomainRef): Promise<void>;
    /** Whether the address is a mailbox or forwarder of the domain (a catch-all must lead to one). */
    hasAddress(tx: Queryable, domain: DomainRef, address: string): Promise<boolean>;
  };
}
