import type { Caller } from '../../auth/caller.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { PageParams } from '../../db/paging.js';
import { parseCidr } from '../../lib/cidr.js';
import { conflict, featureUnavailable, invalid, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkVersion, staleVersion } from '../../lib/if-match.js';
import { mergeFields } from '../../lib/merge-patch.js';
import { parseSshPublicKey, SshKeyRefused, type SshPublicKey } from '../../lib/ssh-public-key.js';
import { lockBelowLimit, reachableAccount, writableAccount } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import { publishEvent, publishResourceEvent } from '../publishing/index.js';
import * as repo from './repo.js';
import { keyEvent, presentAccess, toKey } from './representation.js';
import type { AccountSsh, CreateSshKey, PutAccountSsh, SshKey, SshKeyPatch } from './schemas.js';
import { capAccess, touchSshUnit } from './unit.js';

const duplicateKey = () => conflict('already_exists', 'The account already has this key.');

/** The key line as sshd would read it; why not as a 422 on `/public_key`. */
function parseKey(line: string): SshPublicKey {
  try {
    return parseSshPublicKey(line);
  } catch (err) {
    if (err instanceof SshKeyRefused) throw invalid([{ pointer: '/public_key', code: err.code, detail: err.message }]);
    throw err;
  }
}

/** Field errors of `allowed_from`: each an address or a CIDR block. */
function checkAllowedFrom(list: string[]): void {
  const errors = list.flatMap((value, i) =>
    parseCidr(value)
      ? []
      : [{ pointer: `/allowed_from/${i}`, code: 'invalid_format', detail: 'is not an address or a CIDR block' }],
  );
  if (errors.length) throw invalid(errors);
}

export function sshService({ db, jobs, config }: ServiceDeps) {
  /** The key of the account in the caller's reach; 404 otherwise. */
  async function load(caller: Caller, accountId: string, id: string): Promise<repo.KeyRow> {
    const row = await repo.findKey(db, caller, accountId, id);
    if (!row) throw notFound('SSH key');
    return row;
  }

  return {
    load,
    reachableAccount: (caller: Caller, accountId: string) => reachableAccount(db, caller, accountId),

    getAccess: async (caller: Caller, accountId: string): Promise<AccountSsh> =>
      (await presentAccess(db, await reachableAccount(db, caller, accountId), config.ssh.port)).shown,

    /** The mode the account's user is reached in; more than the plan's `ssh_access` is a 403. */
    async putAccess(caller: Caller, accountId: string, input: PutAccountSsh): Promise<AccountSsh> {
      const account = await writableAccount(db, caller, accountId);
      if (capAccess(input.access, account.plan_ssh_access) !== input.access)
        throw featureUnavailable('ssh_access', `The account's plan allows SSH access up to ${account.plan_ssh_access}.`);
      return db.transaction(async (tx) => {
        await touchSshUnit(tx, jobs, account, input.access);
        const { shown, generation } = await presentAccess(tx, account, config.ssh.port);
        await publishEvent(tx, {
          type: 'account.ssh.updated',
          accountId: account.id,
          resellerId: account.reseller_id,
          resource: { type: 'account_ssh', id: account.id, version: generation },
          data: shown,
        });
        return shown;
      });
    },

    async list(caller: Caller, accountId: string, page: PageParams): Promise<SshKey[]> {
      await reachableAccount(db, caller, accountId);
      return (await repo.listKeys(db, accountId, page)).map(toKey);
    },

    get: async (caller: Caller, accountId: string, id: string) => toKey(await load(caller, accountId, id)),

    /** `max_ssh_keys` counted under the account's row lock; a key the account already has is a 409 by the key's constraint. */
    async create(caller: Caller, accountId: string, input: CreateSshKey): Promise<SshKey> {
      const account = await writableAccount(db, caller, accountId);
      const parsed = parseKey(input.public_key);
      const allowedFrom = input.allowed_from ?? [];
      checkAllowedFrom(allowedFrom);
      const id = newId('ssk');
      try {
        return await db.transaction(async (tx) => {
          await lockBelowLimit(tx, account.id, 'max_ssh_keys', repo.countKeys);
          await repo.insertKey(tx, {
            id,
            account_id: account.id,
            name: input.name,
            type: parsed.type,
            bits: parsed.bits,
            fingerprint_sha256: parsed.fingerprint_sha256,
            comment: parsed.comment,
            public_key: parsed.key,
            allowed_from: allowedFrom,
          });
          await touchSshUnit(tx, jobs, account);
          return keyEvent(tx, 'created', id);
        });
      } catch (err) {
        if (isUniqueViolation(err, 'ssh_keys_fingerprint_key')) throw duplicateKey();
        throw err;
      }
    },

    async update(caller: Caller, accountId: string, id: string, patch: SshKeyPatch, expectedVersion?: number): Promise<SshKey> {
      const current = await load(caller, accountId, id);
      const account = await writableAccount(db, caller, accountId);
      checkVersion(expectedVersion, current.version);
      const fields = mergeFields<repo.KeyFields>({ name: current.name, allowed_from: current.allowed_from }, patch);
      checkAllowedFrom(fields.allowed_from);
      return db.transaction(async (tx) => {
        if (!(await repo.updateKey(tx, id, current.version, fields))) throw staleVersion();
        await touchSshUnit(tx, jobs, account);
        return keyEvent(tx, 'updated', id);
      });
    },

    /** The next login with it is refused once the unit is applied. */
    async remove(caller: Caller, accountId: string, id: string, expectedVersion?: number): Promise<void> {
      const current = await load(caller, accountId, id);
      const account = await writableAccount(db, caller, accountId);
      checkVersion(expectedVersion, current.version);
      await db.transaction(async (tx) => {
        await repo.deleteKey(tx, id);
        await touchSshUnit(tx, jobs, account);
        await publishResourceEvent(tx, 'ssh_key.deleted', 'ssh_key', current, toKey(current));
      });
    },
  };
}
export type SshService = ReturnType<typeof sshService>;
