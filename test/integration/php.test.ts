import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentLink, siteDir } from '../../src/layout.js';
import { PhpFpmDriver } from '../../src/provisioning/drivers/php-fpm.js';
import { eventually, type TestApp } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';
import { daemonApp, daemonEnv, httpGet, NO_DAEMONS } from './daemons.js';

/**
 * PHP on real daemons: nginx hands `*.php` to the account's PHP-FPM pool, which runs as the
 * account's Unix user, confined to its home; PHP reaches the account's MariaDB database with
 * credentials made through the API.
 */
const version = daemonEnv?.BERTH_IT_PHP?.split(',')[0];
const [dbHost, dbPort] = (daemonEnv?.BERTH_IT_MARIADB ?? ':').split(':') as [string, string];

describe.skipIf(!version)(
  `PHP sites (${version ? `php-fpm ${version}` : `skipped: ${NO_DAEMONS} with PHP-FPM installed`})`,
  () => {
    let t: TestApp;
    const runtime = `php-${version}`;
    beforeAll(async () => {
      t = await daemonApp();
    });
    afterAll(async () => t?.close());

    const site = async (id: string) => (await t.get(`/v1/sites/${id}`)).body;
    /** An account on a plan with PHP, a domain, and a PHP site on it, live with `files`. */
    async function phpSite(files: { path: string; content: string }[], plan?: { id: string }) {
      const account = await createAccount(t, (plan ?? (await createPlan(t, undefined, { features: ['php'] }))).id);
      const name = `php-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.com`;
      expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
      const created = await t.post('/v1/sites', { account_id: account.id, hostname: name, runtime });
      expect(created.status, created.text).toBe(202);
      const id = created.body.id as string;
      await eventually(async () => (await site(id)).status === 'active');
      await deploy(id, files);
      return { account, name, id };
    }
    async function deploy(id: string, files: { path: string; content: string }[]) {
      const r = await t.request('POST', `/v1/sites/${id}/deployments`, {
        raw: tarGz(files),
        headers: { 'content-type': 'application/gzip' },
      });
      expect(r.status, r.text).toBe(202);
      await eventually(async () => {
        const s = await site(id);
        return s.current_deployment_id === r.body.id && s.sync_state === 'in_sync';
      });
    }

    it('answers index.php through nginx with the chosen version; other paths reach the front controller', async () => {
      const { name, id } = await phpSite([
        {
          path: 'index.php',
          content: '<?php echo "PHP ", PHP_VERSION, " at ", $_SERVER["REQUEST_URI"], " as ", get_current_user();',
        },
        { path: 'hello.txt', content: 'static beside PHP' },
      ]);
      const home = await eventually(async () => {
        const r = await httpGet(name);
        return r.status === 200 ? r : null;
      });
      expect(home.body).toMatch(new RegExp(`^PHP ${version!.replace('.', '\\.')}\\.\\d+ at / as berth-`));
      expect((await httpGet(name, '/shop/cart?x=1')).body).toContain('at /shop/cart?x=1');
      expect((await httpGet(name, '/hello.txt')).body).toBe('static beside PHP');
      expect((await httpGet(name, '/missing.php')).status).toBe(404);

      // Suspended: 503, PHP or not.
      await t.post(`/v1/sites/${id}/suspend`, { reason: 'abuse' });
      await eventually(async () => (await httpGet(name)).status === 503);
    });

    it('PHP reads a row from the account’s MariaDB database with credentials made through the API', async () => {
      const plan = await createPlan(t, undefined, { features: ['php'] });
      const account = await createAccount(t, plan.id);
      const db = (await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_app` })).body;
      const user = (
        await t.post('/v1/database-users', {
          account_id: account.id,
          username: `${account.username}_app`,
          generate_password: true,
        })
      ).body;
      await t.request('PUT', `/v1/databases/${db.id}/users/${user.id}`, { body: { privileges: ['ALL'] } });
      await eventually(async () => (await t.get(`/v1/database-users/${user.id}`)).body.sync_state === 'in_sync');
      await new Promise<void>((resolve, reject) =>
        execFile(
          'mariadb',
          [
            '--no-defaults',
            `--host=${dbHost}`,
            `--port=${dbPort}`,
            `--user=${user.username}`,
            db.name,
            '-e',
            "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('from the database')",
          ],
          { env: { PATH: process.env.PATH, MYSQL_PWD: user.password } },
          (err) => (err ? reject(new Error(err.message)) : resolve()),
        ),
      );
      const config = JSON.stringify({
        host: dbHost,
        port: Number(dbPort),
        user: user.username,
        password: user.password,
        name: db.name,
      });
      const script = `<?php $c = json_decode(file_get_contents(__DIR__ . '/config.json'));
      $db = new mysqli($c->host, $c->user, $c->password, $c->name, $c->port);
      echo $db->query('SELECT body FROM notes')->fetch_row()[0];`;
      const { name } = await phpSite(
        [
          { path: 'index.php', content: script },
          { path: 'config.json', content: config },
        ],
        plan,
      );
      await eventually(async () => (await httpGet(name)).body === 'from the database');
    });

    it('one account’s PHP cannot read another account’s files; the last PHP site takes its pool with it', async () => {
      const victim = await phpSite([{ path: 'secret.php', content: '<?php // the password is swordfish' }]);
      const secret = path.join(t.dataDir, 'accounts', victim.account.id, 'sites', victim.id, 'current', 'secret.php');
      expect(existsSync(secret)).toBe(true);
      const attempt = `<?php
      $path = ${JSON.stringify(secret)};
      echo @file_get_contents($path) === false ? "refused" : "READ IT";
      echo " ", @is_readable($path) ? "READABLE" : "unreadable";
      echo " ", function_exists("shell_exec") && @shell_exec("cat " . $path) ? "SHELL" : "no shell";`;
      const attacker = await phpSite([{ path: 'index.php', content: attempt }]);
      await eventually(async () => (await httpGet(attacker.name)).status === 200);
      expect((await httpGet(attacker.name)).body).toBe('refused unreadable no shell');

      // The attacker's site was its account's only PHP site: deleting it removes the pool.
      const pool = path.join(
        daemonEnv!.BERTH_IT_DAEMONS as string,
        'php',
        version!,
        'pools',
        `berth-${attacker.account.username}.conf`,
      );
      expect(existsSync(pool)).toBe(true);
      expect((await t.request('DELETE', `/v1/sites/${attacker.id}`)).status).toBe(202);
      await eventually(async () => (await t.get(`/v1/sites/${attacker.id}`)).status === 404);
      expect(existsSync(pool)).toBe(false);
    });

    it(
      "a move's freeze ends the account's PHP requests still running once nginx's wait is over",
      { timeout: 120_000 },
      async () => {
        const { account, name, id } = await phpSite([
          { path: 'slow.php', content: '<?php touch(__DIR__ . "/started"); sleep(60); touch(__DIR__ . "/late"); echo "late";' },
        ]);
        const release = (file: string) => path.join(currentLink(siteDir(t.dataDir, account.id, id)), file);
        const slow = httpGet(name, '/slow.php');
        await eventually(async () => existsSync(release('started')));
        const frozen = (at: string | null) =>
          t.db.query('UPDATE accounts SET move_id = $2, frozen_at = $3 WHERE id = $1', [account.id, at && 'mov_freeze_test', at]);
        const applied = async (aliases: string[]) => {
          const r = await t.request('PATCH', `/v1/sites/${id}`, { body: { aliases } });
          expect(r.status, r.text).toBe(200);
          await eventually(async () => (await t.get(`/v1/sites/${id}`)).body.sync_state === 'in_sync');
        };
        try {
          // Frozen as a move freezes it, then the site's unit applied again (a change to it).
          await frozen(new Date().toISOString());
          await applied([`www.${name}`]);
          // Cut off well before its minute: its worker is gone, and it never wrote what came after.
          expect((await slow).status).toBe(502);
          expect(existsSync(release('late'))).toBe(false);
        } finally {
          await frozen(null);
          await applied([]);
        }
      },
    );

    it('a pool the configuration check refuses is put back as it was, and the site goes on answering', async () => {
      const { account, name } = await phpSite([{ path: 'index.php', content: '<?php echo "before";' }]);
      const daemons = daemonEnv!.BERTH_IT_DAEMONS as string;
      const pool = path.join(daemons, 'php', version!, 'pools', `berth-${account.username}.conf`);
      const before = readFileSync(pool, 'utf8');
      // The master's configuration with a line `php-fpm -t` refuses: the driver checks against it.
      const conf = path.join(daemons, 'php', version!, 'php-fpm.conf');
      const broken = path.join(daemons, 'php', version!, 'refused.conf');
      writeFileSync(broken, `${readFileSync(conf, 'utf8')}\nnot_a_directive = 1\n`);
      try {
        const driver = new PhpFpmDriver([version!], {
          poolDir: daemonEnv!.BERTH_PHP_POOL_DIR as string,
          fpmConf: broken,
          fpmPid: daemonEnv!.BERTH_PHP_FPM_PID as string,
          socketDir: daemonEnv!.BERTH_PHP_SOCKET_DIR as string,
          webGroup: daemonEnv!.BERTH_PHP_WEB_GROUP as string,
        });
        const home = path.join(t.dataDir, 'accounts', account.id);
        const spec = { username: account.username, version: version!, home, tmp: path.join(home, 'tmp'), workers: 9 };
        await expect(driver.ensurePools([spec])).rejects.toThrow(/php-fpm.* -t/);
        expect(readFileSync(pool, 'utf8')).toBe(before);
      } finally {
        rmSync(broken, { force: true });
      }
      expect((await httpGet(name)).body).toBe('before');
    });
  },
);
