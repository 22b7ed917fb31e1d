import type { Db } from '../../db/client.js';
import type { JobQueue } from '../../jobs/queue.js';
import * as repo from './repo.js';
import { addressEvent, presentAddress } from './representation.js';
import { touchMailUnit } from './unit.js';

export interface RestoredAddress {
  /** The address as it stands now, if it still exists (found by id or by address). */
  current: repo.AddressRow | undefined;
  /** The id it had in the backup: a re-created address gets it back. */
  id: string;
  kind: 'mailbox' | 'forwarder';
  address: string;
  domain: { id: string; name: string; account_id: string };
  fields: repo.AddressFields;
}

/**
 * The backup restore's way in: puts a mailbox or forwarder back as the backup holds it (its
 * password hash included), with its event and the mail apply, in one transaction.
 */
export async function putBackAddress(deps: { db: Db; jobs: JobQueue; dataDir: string }, a: RestoredAddress): Promise<void> {
  await deps.db.transaction(async (tx) => {
    if (a.current) await repo.updateAddress(tx, a.current.id, a.current.version, a.fields);
    else
      await repo.insertAddress(tx, {
        id: a.id,
        kind: a.kind,
        domain_id: a.domain.id,
        account_id: a.domain.account_id,
        address: a.address,
        ...a.fields,
      });
    const row = (await repo.findAddressById(tx, a.current?.id ?? a.id)) as repo.AddressRow;
    await addressEvent(tx, a.current ? 'updated' : 'created', row, await presentAddress(deps.dataDir, row));
    await touchMailUnit(tx, deps.jobs, a.domain);
  });
}
