import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthModule, type ServiceParams } from '../../examples/billing-module/module.js';
import { createTestApp, eventually, OPERATOR_TOKEN, type TestApp } from '../helpers/app.js';
import { createPlan } from '../helpers/fixtures.js';

/** examples/billing-module: WHMCS's functions of a server module, against a real server listening on a port. */
let t: TestApp;
let baseUrl: string;
beforeAll(async () => {
  t = await createTestApp({ env: { BERTH_USAGE_METER_MS: '200' } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => t.close());

describe('the billing module example', () => {
  it('creates (once, retried), suspends, unsuspends, changes package, signs on, updates usage, lists for a sync, terminates', async () => {
    const whmcs = berthModule({ baseUrl, token: OPERATOR_TOKEN });
    const [starter, pro] = [await createPlan(t), await createPlan(t)];
    const service: ServiceParams = {
      serviceid: 1042,
      username: 'whmcsshop',
      domain: 'whmcs-shop.com',
      configoption1: starter.id,
      clientsdetails: { email: 'owner@customer.example.com' },
    };
    expect(await whmcs.CreateAccount(service)).toBe('success');
    expect(await whmcs.CreateAccount(service)).toBe('success'); // a retry: the same account
    const accounts = (await t.get('/v1/accounts?username=whmcsshop')).body.data;
    expect(accounts).toHaveLength(1);
    const id = accounts[0].id;
    expect((await t.get(`/v1/domains/whmcs-shop.com`)).body.account_id).toBe(id);

    expect(await whmcs.SuspendAccount({ ...service, suspendreason: 'Overdue on Payment' })).toBe('success');
    expect((await t.get(`/v1/accounts/${id}`)).body).toMatchObject({ status: 'suspended' });
    expect(await whmcs.SuspendAccount(service)).toBe('success');
    expect(await whmcs.UnsuspendAccount(service)).toBe('success');
    expect((await t.get(`/v1/accounts/${id}`)).body.status).toBe('active');

    expect(await whmcs.ChangePackage({ ...service, configoption1: pro.id })).toBe('success');
    expect((await t.get(`/v1/accounts/${id}`)).body.plan_id).toBe(pro.id);
    expect(await whmcs.ChangePackage({ ...service, configoption1: 'pln_00000000000000000000000000' })).toMatch(
      /^validation_failed: .*\/plan_id/,
    );

    const sso = await whmcs.ServiceSingleSignOn(service);
    expect(sso).toMatchObject({ success: true, redirectTo: expect.stringContaining('/panel/#login_code=') });
    expect((await whmcs.ServiceSingleSignOn({ ...service, username: 'nobody' })).success).toBe(false);

    const usage = await eventually(async () =>
      (await whmcs.UsageUpdate()).find((u) => u.username === 'whmcsshop' && u.updated_at),
    );
    expect(usage.diskusage).toBeGreaterThanOrEqual(0);
    expect(usage.bwusage).toBe(0);
    expect(await whmcs.ListAccounts()).toContainEqual(
      expect.objectContaining({ username: 'whmcsshop', domain: 'whmcs-shop.com', product: pro.id, status: 'Active' }),
    );

    expect(await whmcs.TerminateAccount(service)).toBe('success');
    expect((await t.get(`/v1/accounts/${id}`)).status).toBe(404);
    expect(await whmcs.SuspendAccount(service)).toMatch(/no hosting account is named whmcsshop/);
  });
});
