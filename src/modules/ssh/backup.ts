import { type BackupPart, RestoreRefused, type StagedPart } from '../../contribution.js';
import { parseSshPublicKey } from '../../lib/ssh-public-key.js';
import type { SshAccessMode } from '../../provisioning/render/ssh.js';
import { findAccountById, lockBelowLimit } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import * as repo from './repo.js';
import { keyEvent, toKey } from './representation.js';
import type { SshKey } from './schemas.js';
import { touchSshUnit } from './unit.js';

/** What a backup's manifest holds of an account's SSH access: the mode, and each key with its public key. */
interface SshManifest {
  ssh?: { access: SshAccessMode; keys: (SshKey & { public_key: string })[] };
}

/**
 * SSH in backups: the access mode and the public keys (never a private one: Berth holds none).
 * A restore puts each key back with its id, re-creating what is gone within `max_ssh_keys` (a key
 * the account holds again under another id is kept as it is), sets the mode (never above the
 * plan's, as ever) and applies the account's SSH unit once.
 */
export function sshBackupPart({ db, jobs }: ServiceDeps): BackupPart {
  return {
    name: 'ssh',

    async stage(accountId: string): Promise<StagedPart> {
      const access = (await repo.findAccess(db, accountId))?.access ?? 'disabled';
      const rows = await repo.keysOfAccount(db, accountId);
      return {
        manifest: { ssh: { access, keys: rows.map((r) => ({ ...toKey(r), public_key: r.public_key })) } } satisfies SshManifest,
        dirs: [],
        contents: { ssh_keys: rows.length },
      };
    },

    // Rows only: the target's keys and access are rendered from them once the account is placed there.
    land: async () => undefined,

    async restore(accountId: string, manifest: SshManifest): Promise<void> {
      const wanted = manifest.ssh;
      if (!wanted) return;
      await db.transaction(async (tx) => {
        const account = await findAccountById(tx, accountId);
        if (!account) throw new RestoreRefused('invalid_state', 'The account no longer exists.');
        const held = new Set((await repo.keysOfAccount(tx, accountId)).map((k) => k.fingerprint_sha256));
        for (const key of wanted.keys) {
          const fields = { name: key.name, allowed_from: key.allowed_from };
          const current = await repo.findKeyById(tx, key.id);
          if (current && current.account_id !== accountId)
            throw new RestoreRefused('already_exists', `SSH key ${key.id} belongs to another account.`);
          if (current) await repo.updateKey(tx, key.id, current.version, fields);
          else if (held.has(key.fingerprint_sha256)) continue;
          else {
            // The archive is read as input: its key is checked as a new one would be.
            const parsed = parseSshPublicKey(key.public_key);
            await lockBelowLimit(tx, accountId, 'max_ssh_keys', repo.countKeys);
            await repo.insertKey(tx, {
              ...parsed,
              public_key: parsed.key,
              comment: key.comment,
              id: key.id,
              account_id: accountId,
              ...fields,
            });
          }
          await keyEvent(tx, current ? 'updated' : 'created', key.id);
        }
        await touchSshUnit(tx, jobs, account, wanted.access);
      });
    },
  };
}
