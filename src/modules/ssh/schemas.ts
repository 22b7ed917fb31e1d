import { Type, type Static } from 'typebox';
import { Id, Nullable, ResourceMeta, SyncFields, Timestamp } from '../../http/schemas.js';
import { SshAccess } from '../plans/index.js';

/** SSH access and keys as the API shows and takes them: each shape declared once (validator, type, document). */

const KeyName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]+$' });
const AllowedFrom = Type.Array(Type.String({ minLength: 1, maxLength: 50, description: 'An address or a CIDR block.' }), {
  maxItems: 50,
  uniqueItems: true,
  description: 'The key is accepted only from these addresses (empty: from anywhere).',
});
const Sync = SyncFields("`in_sync` once the account's web server holds the account's keys and access as shown.");

export const AccountSsh = Type.Object(
  {
    account_id: Id('acc'),
    access: SshAccess,
    host: Nullable(
      Type.String({ maxLength: 253, description: "The address of the account's web server (null until it has one)." }),
    ),
    port: Type.Integer({ minimum: 1, maximum: 65535, format: 'int32' }),
    username: Type.String({ maxLength: 32, description: "The account's Unix user: the name to log in with." }),
    ...Sync,
    updated_at: Timestamp,
  },
  {
    $id: 'AccountSsh',
    description:
      "How the account's Unix user is reached over SSH on its web server: `ssh -p <port> <username>@<host>` (or `sftp`) with one of the account's keys.",
  },
);
export type AccountSsh = Static<typeof AccountSsh>;

export const PutAccountSsh = Type.Object({ access: SshAccess }, { additionalProperties: false });
export type PutAccountSsh = Static<typeof PutAccountSsh>;

export const SshKey = Type.Object(
  {
    id: Id('ssk'),
    account_id: Id('acc'),
    name: KeyName,
    type: Type.String({ maxLength: 60, examples: ['ssh-ed25519'] }),
    bits: Type.Integer({ minimum: 1, maximum: 65536, format: 'int32' }),
    fingerprint_sha256: Type.String({
      maxLength: 60,
      description: "`SHA256:` and the unpadded base64 of the key's SHA-256, as `ssh-keygen -lf` prints it.",
    }),
    comment: Nullable(Type.String({ maxLength: 16_384, description: 'The comment the key line ended with.' })),
    allowed_from: AllowedFrom,
    last_used_at: Nullable(Timestamp),
    ...Sync,
    ...ResourceMeta,
  },
  { $id: 'SshKey', description: "A public key that logs in as the account's Unix user. Berth never holds a private key." },
);
export type SshKey = Static<typeof SshKey>;

export const SshKeyMutable = { name: KeyName, allowed_from: AllowedFrom };
export type SshKeyPatch = Partial<Static<ReturnType<typeof Type.Object<typeof SshKeyMutable>>>>;

export const CreateSshKey = Type.Object(
  {
    name: KeyName,
    public_key: Type.String({
      minLength: 1,
      maxLength: 16_384,
      description:
        'One line of an OpenSSH public key (`ssh-ed25519 AAAA... comment`): Ed25519, ECDSA (P-256, P-384, P-521), RSA of at least 3072 bits, or a security key (`sk-ssh-ed25519@openssh.com`, `sk-ecdsa-sha2-nistp256@openssh.com`). No options prefix.',
    }),
    allowed_from: Type.Optional(AllowedFrom),
  },
  { additionalProperties: false },
);
export type CreateSshKey = Static<typeof CreateSshKey>;

export const SshKeyParams = Type.Object({ account_id: Id('acc'), ssh_key_id: Id('ssk') }, { additionalProperties: false });

export const sshSchemas = [AccountSsh, SshKey];
