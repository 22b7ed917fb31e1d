import { type Static, Type } from 'typebox';
import { ACCOUNT_USERNAME_PATTERN } from '../../lib/account-username.js';

/**
 * SSH and SFTP access as a web server applies it. Which of the three modes an account's Unix user
 * has is its membership of a group (`berth-sftp`, `berth-shell`; every account user is in
 * `berth`), so that one drop-in written once holds every `Match` block and a change of mode or
 * key never reloads sshd: sshd reads groups and key files at each login. Keys live in a root-owned
 * file per user outside the home, which the account's own PHP can neither write nor replace.
 */

export const SSH_GROUPS = { all: 'berth', sftp: 'berth-sftp', shell: 'berth-shell' } as const;

export const SshAccessMode = Type.Union([Type.Literal('disabled'), Type.Literal('sftp'), Type.Literal('shell')]);
export type SshAccessMode = Static<typeof SshAccessMode>;

/** A key line as the key file holds it: `type base64`, checked again here (no options, no comment). */
const KeyLine = Type.String({
  pattern:
    '^(ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|ssh-rsa|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com) [A-Za-z0-9+/]+={0,2}$',
  maxLength: 16_384,
});
const Cidr = Type.String({ pattern: '^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$', maxLength: 50 });

/** An account's SSH unit as its web server is handed it (an agent's, or this process's drivers). */
export const SshUnitSpec = Type.Object({
  account_id: Type.String({ minLength: 1, maxLength: 100 }),
  username: Type.String({ pattern: ACCOUNT_USERNAME_PATTERN }),
  /** What the account may do now: `disabled` while it is suspended. */
  access: SshAccessMode,
  keys: Type.Array(Type.Object({ key: KeyLine, allowed_from: Type.Array(Cidr, { maxItems: 50 }) }), { maxItems: 10_000 }),
  /** Frozen for a move (and `disabled`): the sessions begun before it end, with what they left running. */
  frozen: Type.Optional(Type.Boolean()),
});
export type SshUnitSpec = Static<typeof SshUnitSpec>;

/** The unit with where it lives on that server: the account's Unix user and its files' root (the SFTP chroot). */
export type SshAccountSpec = SshUnitSpec & { user: string; home: string };

/**
 * The key file: one line per key, `restrict` (no forwarding, no agent, no X11, no `~/.ssh/rc`)
 * with a TTY for a shell, `from=` when the key is limited to addresses. Null: no key is accepted.
 */
export function renderAuthorizedKeys(spec: SshUnitSpec): string | null {
  if (spec.access === 'disabled' || spec.keys.length === 0) return null;
  const restrict = spec.access === 'shell' ? 'restrict,pty' : 'restrict';
  const lines = spec.keys.map((k) => {
    const from = k.allowed_from.length ? `from="${k.allowed_from.join(',')}",` : '';
    return `${from}${restrict} ${k.key}`;
  });
  return `# Written by Berth: the keys of the account ${spec.username}.\n${lines.join('\n')}\n`;
}

const SAFE_PATH = /^\/[A-Za-z0-9._/-]+$/;

/** Keywords every account's login gets: keys from Berth's file alone, nothing forwarded. */
const COMMON = [
  'AuthenticationMethods publickey',
  'PasswordAuthentication no',
  'KbdInteractiveAuthentication no',
  'AuthorizedKeysCommand none',
  'AllowTcpForwarding no',
  'AllowStreamLocalForwarding no',
  'AllowAgentForwarding no',
  'X11Forwarding no',
  'PermitTunnel no',
  'PermitUserRC no',
];

/**
 * The drop-in for `sshd_config.d`. sshd takes the first value it finds for a keyword, so the
 * blocks of the two modes come before the catch-all of every account user, which accepts no key
 * at all (`disabled`, and any account user outside the two groups). `sftp`: chrooted into the
 * account's files (`<chroots>/<user>` links to them: sshd checks each component of the path it is
 * given, so the data directory may sit below a directory others can write, such as /tmp),
 * `internal-sftp` forced, starting in `/sites`, no TTY.
 */
export function renderSshdDropIn(o: { keysDir: string; chrootDir: string }): string {
  for (const p of [o.keysDir, o.chrootDir])
    if (!SAFE_PATH.test(p)) throw new Error(`refusing an unsafe path in the sshd drop-in: ${JSON.stringify(p.slice(0, 100))}`);
  const block = (group: string, lines: string[]) => [`Match Group ${group}`, ...lines.map((l) => `\t${l}`)].join('\n');
  const keys = `AuthorizedKeysFile ${o.keysDir}/%u`;
  return `${[
    '# Written by Berth: SSH and SFTP for hosting accounts, by group (checked with sshd -t before a reload).',
    block(SSH_GROUPS.sftp, [
      keys,
      `ChrootDirectory ${o.chrootDir}/%u`,
      'ForceCommand internal-sftp -d /sites',
      'PermitTTY no',
      ...COMMON,
    ]),
    block(SSH_GROUPS.shell, [keys, 'PermitTTY yes', ...COMMON]),
    block(SSH_GROUPS.all, ['AuthorizedKeysFile none', 'PermitTTY no', ...COMMON]),
  ].join('\n')}\n`;
}

/** A login sshd accepted with a key: the Unix user, the key's fingerprint, and when it was seen. */
export const SshLogin = Type.Object({
  user: Type.String({ pattern: '^[a-z_][a-z0-9_-]{0,31}$' }),
  fingerprint_sha256: Type.String({ pattern: '^SHA256:[A-Za-z0-9+/]{43}$' }),
  at: Type.String({ format: 'date-time', maxLength: 40 }),
});
export type SshLogin = Static<typeof SshLogin>;

const ACCEPTED = /Accepted publickey for ([a-z_][a-z0-9_-]{0,31}) from \S+ port \d+ ssh2: \S+ (SHA256:[A-Za-z0-9+/]{43})$/;

/**
 * The key logins in lines of sshd's log (`LogLevel` INFO or more, as a file of its own or
 * syslog's), each seen `at`: sshd's own timestamp is not in a file written with `-E`.
 */
export function parseSshdLogins(text: string, at: string): SshLogin[] {
  return text.split('\n').flatMap((line) => {
    const m = ACCEPTED.exec(line.trimEnd());
    return m ? [{ user: m[1] as string, fingerprint_sha256: m[2] as string, at }] : [];
  });
}
