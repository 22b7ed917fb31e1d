import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountHome, loginHome } from '../../src/layout.js';
import { sshDriver } from '../../src/provisioning/drivers/index.js';
import { SshFilesDriver } from '../../src/provisioning/drivers/openssh.js';
import { eventually, type TestApp } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';
import { daemonApp, daemonEnv, httpGet, NO_DAEMONS, sftpBatch as sftp, sshCommand, sshKeyPair } from './daemons.js';

/**
 * SSH and SFTP on a real sshd (scripts/daemons/up.sh starts one of its own): OpenSSH's own
 * clients log in as the accounts' Unix users with keys added through the API.
 */
const sshAt = daemonEnv?.BERTH_IT_SSH;
const php = daemonEnv?.BERTH_IT_PHP?.split(',')[0];

describe.skipIf(!sshAt || !php)(
  `SSH and SFTP (${sshAt ? `sshd at ${sshAt}` : `skipped: ${NO_DAEMONS} with OpenSSH and PHP-FPM installed`})`,
  () => {
    let t: TestApp;
    let keys: string;
    const keyPair = (name: string) => sshKeyPair(keys, name);
    const ssh = sshCommand;

    beforeAll(async () => {
      t = await daemonApp();
      keys = mkdtempSync(path.join(tmpdir(), 'berth-ssh-keys-'));
    });
    afterAll(async () => {
      await t?.close();
      rmSync(keys, { recursive: true, force: true });
    });

    const inSync = (accountId: string) =>
      eventually(async () => {
        const r = await t.get(`/v1/accounts/${accountId}/ssh`);
        if (r.body.sync_state === 'error') throw new Error(r.body.sync_error);
        return r.body.sync_state === 'in_sync' && r.body;
      }, 30_000);
    const setAccess = async (accountId: string, access: string) => {
      const r = await t.put(`/v1/accounts/${accountId}/ssh`, { access });
      expect(r.status, r.text).toBe(200);
      return inSync(accountId);
    };
    const addKey = async (accountId: string, publicKey: string) => {
      const r = await t.post(`/v1/accounts/${accountId}/ssh-keys`, { name: 'key', public_key: publicKey });
      expect(r.status, r.text).toBe(201);
      await inSync(accountId);
      return r.body.id as string;
    };

    /** An account on a plan with PHP and shell access, with a PHP site live with `files`. */
    async function accountWithSite(files: { path: string; content: string }[]) {
      const plan = await createPlan(t, undefined, { features: ['php'], ssh_access: 'shell' });
      const account = await createAccount(t, plan.id);
      const name = `ssh-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.com`;
      expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
      const created = await t.post('/v1/sites', { account_id: account.id, hostname: name, runtime: `php-${php}` });
      expect(created.status, created.text).toBe(202);
      const site = created.body.id as string;
      await eventually(async () => (await t.get(`/v1/sites/${site}`)).body.status === 'active', 60_000);
      const deployed = await t.request('POST', `/v1/sites/${site}/deployments`, {
        raw: tarGz(files),
        headers: { 'content-type': 'application/gzip' },
      });
      expect(deployed.status, deployed.text).toBe(202);
      await eventually(async () => {
        const s = (await t.get(`/v1/sites/${site}`)).body;
        return s.current_deployment_id === deployed.body.id && s.sync_state === 'in_sync';
      }, 60_000);
      return { account, name, site, user: `berth-${account.username}` };
    }

    // The PHP of the account writes a key of its choosing where sshd would read it by default.
    const plant = {
      path: 'plant.php',
      content:
        '<?php $h = dirname(__DIR__, 4) . "/home"; @mkdir("$h/.ssh", 0700); file_put_contents("$h/.ssh/authorized_keys", $_GET["k"] . "\\n"); echo "planted";',
    };

    it("sftp uploads a file the account's site serves; in sftp mode a command runs nothing and / is the account's files", async () => {
      const { account, name, site, user } = await accountWithSite([{ path: 'index.html', content: 'home' }, plant]);
      const key = await keyPair('upload');
      await addKey(account.id, key.public);
      expect((await setAccess(account.id, 'sftp')).access).toBe('sftp');

      const local = path.join(keys, 'uploaded.txt');
      writeFileSync(local, 'sent over sftp\n');
      const put = await sftp(key.file, user, `put ${local} ${site}/current/uploaded.txt\n`);
      expect(put.code, put.stderr).toBe(0);
      expect(
        (
          await eventually(async () => {
            const r = await httpGet(name, '/uploaded.txt');
            return r.status === 200 ? r : null;
          })
        ).body,
      ).toBe('sent over sftp\n');
      const uploaded = statSync(path.join(accountHome(t.dataDir, account.id), 'sites', site, 'current', 'uploaded.txt'));
      expect(uploaded.uid).not.toBe(0);

      const listing = await sftp(key.file, user, 'ls -1 /\n');
      expect(listing.code, listing.stderr).toBe(0);
      const names = listing.stdout
        .split('\n')
        .filter((l) => l && !l.startsWith('sftp>'))
        .map((l) => l.replace(/^\//, '').trim());
      expect(names).toEqual(expect.arrayContaining(['sites', 'home', 'tmp']));
      expect(names).not.toContain('etc');
      expect(names).not.toContain('usr');

      const command = await ssh(key.file, user, 'id');
      expect(command.stdout).not.toContain('uid=');
      // Its logins, read from sshd's log, are the key's last use.
      await eventually(async () => (await t.get(`/v1/accounts/${account.id}/ssh-keys`)).body.data[0].last_used_at !== null);
    });

    it('in shell mode logs in as the account in its login home; another account is unreadable; planted, deleted and suspended keys are refused', async () => {
      const a = await accountWithSite([{ path: 'index.html', content: 'a' }, plant]);
      const b = await accountWithSite([{ path: 'index.html', content: 'b' }]);
      await setAccess(b.account.id, 'sftp');
      const key = await keyPair('shell');
      const keyId = await addKey(a.account.id, key.public);
      await setAccess(a.account.id, 'shell');

      const who = await ssh(key.file, a.user, 'id -un; pwd; touch ~/.dotfile && echo wrote');
      expect(who.code, who.stderr).toBe(0);
      expect(who.stdout.split('\n')).toEqual([a.user, loginHome(accountHome(t.dataDir, a.account.id)), 'wrote', '']);
      const other = await ssh(key.file, a.user, `ls ${accountHome(t.dataDir, b.account.id)}`);
      expect(other.code).not.toBe(0);
      expect(other.stderr).toMatch(/Permission denied/);

      // A key the account's own PHP writes into its home logs nobody in.
      const planted = await keyPair('planted');
      const r = await httpGet(a.name, `/plant.php?k=${encodeURIComponent(planted.public)}`);
      expect(r.body).toBe('planted');
      expect(
        readFileSync(path.join(loginHome(accountHome(t.dataDir, a.account.id)), '.ssh', 'authorized_keys'), 'utf8'),
      ).toContain(planted.public);
      expect((await ssh(planted.file, a.user, 'true')).stderr).toMatch(/Permission denied/);

      // Suspended, then disabled, then the key deleted: each refused at the next login.
      expect((await t.post(`/v1/accounts/${a.account.id}/suspend`, { reason: 'unpaid' })).status).toBe(200);
      await inSync(a.account.id);
      expect((await ssh(key.file, a.user, 'true')).stderr).toMatch(/Permission denied/);
      expect((await t.post(`/v1/accounts/${a.account.id}/unsuspend`)).status).toBe(200);
      await inSync(a.account.id);
      expect((await ssh(key.file, a.user, 'true')).code).toBe(0);
      await setAccess(a.account.id, 'disabled');
      expect((await ssh(key.file, a.user, 'true')).stderr).toMatch(/Permission denied/);
      await setAccess(a.account.id, 'shell');
      expect((await ssh(key.file, a.user, 'true')).code).toBe(0);
      expect((await t.request('DELETE', `/v1/accounts/${a.account.id}/ssh-keys/${keyId}`)).status).toBe(204);
      await inSync(a.account.id);
      expect((await ssh(key.file, a.user, 'true')).stderr).toMatch(/Permission denied/);
    });

    it("a move's freeze ends the account's sessions and what they left running, but not its PHP-FPM workers", async () => {
      const a = await accountWithSite([{ path: 'index.php', content: '<?php echo getmypid();' }]);
      const key = await keyPair('frozen');
      await addKey(a.account.id, key.public);
      await setAccess(a.account.id, 'shell');
      const uid = Number(execFileSync('id', ['-u', a.user], { encoding: 'utf8' }));
      const processes = () =>
        readdirSync('/proc')
          .filter((p) => /^\d+$/.test(p))
          .map((p) => ({
            pid: Number(p),
            status: (() => {
              try {
                return readFileSync(`/proc/${p}/status`, 'utf8');
              } catch {
                return '';
              }
            })(),
          }))
          // Running: one that exited and waits to be reaped (a zombie) is gone.
          .filter((p) => new RegExp(`^Uid:\\s+${uid}\\s`, 'm').test(p.status) && !/^State:\s+Z/m.test(p.status))
          .map((p) => ({ pid: p.pid, name: /^Name:\s+(.*)$/m.exec(p.status)?.[1] ?? '' }));
      // A session still open, and a process it left behind.
      const session = ssh(key.file, a.user, 'nohup sleep 300 >/dev/null 2>&1 & sleep 300');
      await eventually(async () => processes().filter((p) => p.name === 'sleep').length === 2);
      // A PHP-FPM worker of the account's pool, started by a request.
      const worker = Number((await httpGet(a.name, '/index.php')).body);
      expect(processes().map((p) => p.pid)).toContain(worker);

      const home = accountHome(t.dataDir, a.account.id);
      const spec = { account_id: a.account.id, username: a.account.username, user: a.user, home, keys: [] };
      const env = daemonEnv as Record<string, string>;
      const driver = sshDriver(t.dataDir, {
        dir: env.BERTH_SSH_DIR as string,
        pidFile: env.BERTH_SSH_PID_FILE as string,
        log: null,
      });
      try {
        await driver.applyAccount({ ...spec, access: 'disabled', frozen: true });
        expect(processes().filter((p) => !p.name.startsWith('php-fpm'))).toEqual([]);
        expect(processes().map((p) => p.pid)).toContain(worker);
        expect((await session).code).not.toBe(0);
      } finally {
        await driver.applyAccount({ ...spec, access: 'shell', keys: [{ key: key.public, allowed_from: [] }] });
      }
    });

    it('a drop-in that fails `sshd -t` is taken back before any reload, and the running sshd goes on', async () => {
      const dir = mkdtempSync(path.join('/run', 'berth-ssh-broken-'));
      try {
        const config = path.join(dir, 'sshd_config');
        writeFileSync(config, `${readFileSync(`${daemonEnv?.BERTH_SSH_DIR}/sshd_config`, 'utf8')}NoSuchKeyword yes\n`);
        const pidFile = `${daemonEnv?.BERTH_SSH_DIR}/sshd.pid`;
        const pid = readFileSync(pidFile, 'utf8');
        const driver = new SshFilesDriver('openssh', {
          dropIn: path.join(dir, 'sshd_config.d', 'berth.conf'),
          keysDir: path.join(dir, 'keys'),
          chrootDir: path.join(dir, 'chroot'),
          sshd: { config, pidFile },
          log: null,
        });
        await expect(
          driver.applyAccount({
            account_id: 'acc_x',
            username: 'nobody',
            access: 'disabled',
            keys: [],
            user: 'nobody',
            home: dir,
          }),
        ).rejects.toThrow(/sshd -t failed/);
        expect(() => statSync(path.join(dir, 'sshd_config.d', 'berth.conf'))).toThrow();
        expect(readFileSync(pidFile, 'utf8')).toBe(pid);
        const probe = await sshCommand((await keyPair('probe')).file, 'nobody', 'true');
        expect(probe.stderr).toMatch(/Permission denied/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);
