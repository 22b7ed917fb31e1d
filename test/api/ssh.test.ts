import { readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, world } from '../helpers/fixtures.js';
import { ed25519KeyLine } from '../helpers/ssh-keys.js';

let t: TestApp;
let w: Awaited<ReturnType<typeof world>>;

beforeAll(async () => {
  t = await createTestApp();
  w = await world(t);
});
afterAll(() => t.close());

const rendered = (...parts: string[]) => path.join(t.dataDir, 'rendered', 'ssh', ...parts);
const read = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};
const keyFile = (username: string) => read(rendered('berth', 'keys', `berth-${username}`));
const accessOf = (accountId: string) => `/v1/accounts/${accountId}/ssh`;
const keysOf = (accountId: string) => `/v1/accounts/${accountId}/ssh-keys`;
const inSync = (accountId: string) =>
  eventually(async () => {
    const r = await t.get(accessOf(accountId));
    return r.body.sync_state === 'in_sync' && r.body;
  });

describe('SSH access', () => {
  it('is disabled until turned on, and names the user and port to log in with', async () => {
    const r = await t.get(accessOf(w.accountA.id), w.tokenA);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      account_id: w.accountA.id,
      access: 'disabled',
      port: 22,
      username: `berth-${w.accountA.username}`,
      sync_state: 'in_sync',
    });
    expect((await t.get(accessOf(w.accountA.id), w.tokenB)).status).toBe(404);
  });

  it("turned on within the plan's ssh_access, rendered as its group's Match block and a key file; above the plan a 403", async () => {
    const key = ed25519KeyLine();
    const created = await t.post(keysOf(w.accountA.id), { name: 'laptop', public_key: key }, w.tokenA);
    expect(created.status, created.text).toBe(201);
    // Disabled: no key file at all.
    await inSync(w.accountA.id);
    expect(keyFile(w.accountA.username)).toBeNull();

    const put = await t.put(accessOf(w.accountA.id), { access: 'sftp' }, w.tokenA);
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ access: 'sftp', sync_state: 'pending' });
    await inSync(w.accountA.id);
    expect(keyFile(w.accountA.username)).toContain(`\nrestrict ${key.split(' ').slice(0, 2).join(' ')}\n`);
    const dropIn = read(rendered('sshd_config.d', 'berth.conf')) as string;
    expect(dropIn).toContain('Match Group berth-sftp');
    expect(dropIn).toContain(`ChrootDirectory ${rendered('berth', 'chroot')}/%u`);
    expect(dropIn).toContain('ForceCommand internal-sftp -d /sites');
    expect(dropIn).toContain('PasswordAuthentication no');
    expect(readlinkSync(rendered('berth', 'chroot', `berth-${w.accountA.username}`))).toBe(
      path.join(t.dataDir, 'accounts', w.accountA.id),
    );
    const events = await t.get(`/v1/events?type=account.ssh.updated`);
    expect(events.body.data.find((e: { data: { account_id: string } }) => e.data.account_id === w.accountA.id)).toBeDefined();

    const shell = await t.put(accessOf(w.accountA.id), { access: 'shell' }, w.tokenA);
    expect(shell.status, shell.text).toBe(403);
    expect(shell.body.code).toBe('feature_unavailable');
    expect((await t.put(accessOf(w.accountA.id), { access: 'root' }, w.tokenA)).status).toBe(422);
  });

  it('a shell account gets a TTY; a key limited to addresses gets from=; suspension and a plan without SSH take every key away', async () => {
    const plan = await createPlan(t, undefined, { ssh_access: 'shell' });
    const account = await createAccount(t, plan.id);
    const key = ed25519KeyLine();
    expect((await t.put(accessOf(account.id), { access: 'shell' })).status).toBe(200);
    const created = await t.post(keysOf(account.id), {
      name: 'ci',
      public_key: key,
      allowed_from: ['192.0.2.0/24', '2001:db8::1'],
    });
    expect(created.status, created.text).toBe(201);
    await inSync(account.id);
    const blob = key.split(' ').slice(0, 2).join(' ');
    expect(keyFile(account.username)).toContain(`from="192.0.2.0/24,2001:db8::1",restrict,pty ${blob}`);

    expect((await t.post(`/v1/accounts/${account.id}/suspend`, { reason: 'unpaid' })).status).toBe(200);
    await inSync(account.id);
    expect(keyFile(account.username)).toBeNull();
    expect((await t.post(`/v1/accounts/${account.id}/unsuspend`)).status).toBe(200);
    await inSync(account.id);
    expect(keyFile(account.username)).toContain(blob);

    // Its plan changed to allow only SFTP: the same keys, no TTY any more.
    expect((await t.patch(`/v1/plans/${plan.id}`, { ssh_access: 'sftp' })).status).toBe(200);
    await inSync(account.id);
    expect(keyFile(account.username)).toContain(`,restrict ${blob}`);
    expect((await t.get(accessOf(account.id))).body.access).toBe('sftp');

    const noSsh = await createPlan(t, undefined, { ssh_access: 'disabled' });
    expect((await t.patch(`/v1/accounts/${account.id}`, { plan_id: noSsh.id })).status).toBe(200);
    await inSync(account.id);
    expect(keyFile(account.username)).toBeNull();
    expect((await t.get(accessOf(account.id))).body.access).toBe('disabled');
  });
});

describe('SSH keys', () => {
  it('show the fingerprint ssh-keygen prints, never the key again; a second copy is a 409, bad keys 422 on /public_key', async () => {
    const account = await createAccount(t, w.plan.id);
    const key = ed25519KeyLine('alice@work');
    const r = await t.post(keysOf(account.id), { name: 'work', public_key: key });
    expect(r.status, r.text).toBe(201);
    expect(r.headers.location).toBe(`${keysOf(account.id)}/${r.body.id}`);
    expect(r.body).toMatchObject({
      type: 'ssh-ed25519',
      bits: 256,
      comment: 'alice@work',
      allowed_from: [],
      last_used_at: null,
      fingerprint_sha256: expect.stringMatching(/^SHA256:[A-Za-z0-9+/]{43}$/),
    });
    expect(r.body).not.toHaveProperty('public_key');
    const again = await t.post(keysOf(account.id), { name: 'twice', public_key: key.replace('alice@work', 'other') });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('already_exists');

    const cases: [string, string][] = [
      ['ssh-dss AAAAB3NzaC1kc3MAAACBAP', 'key_type_not_allowed'],
      [`command="rm -rf /" ${key}`, 'invalid_public_key'],
      ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==', 'invalid_public_key'],
      [`${key}\nssh-ed25519 AAAA`, 'invalid_public_key'],
    ];
    for (const [public_key, code] of cases) {
      const bad = await t.post(keysOf(account.id), { name: 'bad', public_key });
      expect(bad.status, public_key).toBe(422);
      expect(bad.body.errors[0]).toMatchObject({ pointer: '/public_key', code });
    }
    const cidr = await t.post(keysOf(account.id), { name: 'x', public_key: ed25519KeyLine(), allowed_from: ['10.0.0.0/33'] });
    expect(cidr.status).toBe(422);
    expect(cidr.body.errors[0].pointer).toBe('/allowed_from/0');
    expect((await t.get(keysOf(account.id))).body.data).toHaveLength(1);
  });

  it("stop at the plan's max_ssh_keys; are renamed and narrowed by PATCH; a deleted key leaves the key file", async () => {
    const plan = await createPlan(t, undefined, { max_ssh_keys: 1 });
    const account = await createAccount(t, plan.id);
    expect((await t.put(accessOf(account.id), { access: 'sftp' })).status).toBe(200);
    const key = ed25519KeyLine();
    const first = await t.post(keysOf(account.id), { name: 'one', public_key: key });
    expect(first.status).toBe(201);
    const second = await t.post(keysOf(account.id), { name: 'two', public_key: ed25519KeyLine() });
    expect(second.status).toBe(403);
    expect(second.body.code).toBe('quota_exceeded');
    expect((await t.get(`/v1/accounts/${account.id}/usage`)).body.usage.ssh_keys).toBe(1);

    const item = `${keysOf(account.id)}/${first.body.id}`;
    const patched = await t.patch(item, { name: 'renamed', allowed_from: ['198.51.100.7'] });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: 'renamed', allowed_from: ['198.51.100.7'], version: 2 });
    await inSync(account.id);
    expect(keyFile(account.username)).toContain('from="198.51.100.7",restrict');
    expect((await t.patch(item, { public_key: key })).status).toBe(422);
    expect((await t.get(item, w.tokenB)).status).toBe(404);

    expect((await t.request('DELETE', item)).status).toBe(204);
    await inSync(account.id);
    expect(keyFile(account.username)).toBeNull();
    expect((await t.get(item)).status).toBe(404);
  });

  it('go into backups with the access mode and come back with a restore: the same id, name and limits, in the key file again', async () => {
    const account = await createAccount(t, w.plan.id, w.tokenA);
    expect((await t.put(accessOf(account.id), { access: 'sftp' }, w.tokenA)).status).toBe(200);
    const key = ed25519KeyLine();
    const made = (await t.post(keysOf(account.id), { name: 'deploy', public_key: key, allowed_from: ['192.0.2.1'] }, w.tokenA))
      .body;
    const backup = await t.post('/v1/backups', { account_id: account.id, include: ['ssh'] }, w.tokenA);
    expect(backup.status, backup.text).toBe(202);
    const done = await eventually(async () => {
      const b = (await t.get(`/v1/backups/${backup.body.id}`)).body;
      return ['completed', 'failed'].includes(b.status) && b;
    });
    expect(done).toMatchObject({ status: 'completed', contents: { ssh_keys: 1 } });
    expect((await t.request('DELETE', `${keysOf(account.id)}/${made.id}`)).status).toBe(204);
    expect((await t.put(accessOf(account.id), { access: 'disabled' }, w.tokenA)).status).toBe(200);
    await inSync(account.id);
    expect(keyFile(account.username)).toBeNull();

    const restore = await t.post(`/v1/backups/${backup.body.id}/restore`, {}, w.tokenA);
    expect(restore.status, restore.text).toBe(202);
    await eventually(async () => (await t.get(`/v1/operations/${restore.body.operation.id}`)).body.status === 'succeeded');
    const back = (await t.get(`${keysOf(account.id)}/${made.id}`)).body;
    expect(back).toMatchObject({
      name: 'deploy',
      comment: 'me@laptop',
      allowed_from: ['192.0.2.1'],
      fingerprint_sha256: made.fingerprint_sha256,
    });
    expect((await inSync(account.id)).access).toBe('sftp');
    expect(keyFile(account.username)).toContain(key.split(' ')[1]);
  });
});

describe('an sshd whose configuration check fails', () => {
  it('leaves the unit in sync_state error with what sshd -t said, counted by berth_sync_errors', async () => {
    const broken = await createTestApp({
      deps: {
        sshDriver: {
          name: 'broken',
          applyAccount: async () => {
            throw new Error('sshd -t failed: /etc/ssh/sshd_config line 3: Bad configuration option: NoSuchKeyword');
          },
          removeAccount: async () => undefined,
          collectLogins: async () => [],
        },
      },
    });
    try {
      const account = await createAccount(broken, (await createPlan(broken)).id);
      expect((await broken.put(accessOf(account.id), { access: 'sftp' })).status).toBe(200);
      const erred = await eventually(async () => {
        const r = (await broken.get(accessOf(account.id))).body;
        return r.sync_state === 'error' && r;
      });
      expect(erred.sync_error).toMatch(/^sshd -t failed: .*NoSuchKeyword$/);
      expect((await broken.get('/metrics')).text).toContain('berth_sync_errors{unit="ssh"} 1');
    } finally {
      await broken.close();
    }
  });
});
