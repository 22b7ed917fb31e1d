import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneLoginCodes } from '../../src/modules/tokens/login-links.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createToken, world } from '../helpers/fixtures.js';

let t: TestApp;
let w: Awaited<ReturnType<typeof world>>;

beforeAll(async () => {
  t = await createTestApp();
  w = await world(t);
});
afterAll(() => t.close());

const makeLink = (accountId: string, token?: string) => t.post(`/v1/accounts/${accountId}/login-links`, {}, token);
const exchange = (code: string) => t.post('/v1/sessions', { login_code: code }, null);

describe('login links', () => {
  it("the account's reseller makes one; its code opens a session of that account alone, once", async () => {
    const link = await makeLink(w.accountA.id, w.tokenA);
    expect(link.status, link.text).toBe(201);
    expect(link.body).toMatchObject({ account_id: w.accountA.id, url: expect.stringMatching(/\/panel\/#login_code=[\w-]{43}$/) });
    expect(link.body.url.endsWith(link.body.login_code)).toBe(true);
    expect(new Date(link.body.expires_at).getTime() - t.clock.now().getTime()).toBe(60_000);

    const session = await exchange(link.body.login_code);
    expect(session.status, session.text).toBe(201);
    expect(session.body.account_id).toBe(w.accountA.id);
    expect(new Date(session.body.expires_at).getTime() - t.clock.now().getTime()).toBe(8 * 3_600_000);
    const me = await t.get('/v1/me', session.body.token);
    expect(me.body).toMatchObject({ principal: { kind: 'account', id: w.accountA.id }, scopes: ['*'] });
    expect((await t.get(`/v1/accounts/${w.accountA.id}`, session.body.token)).status).toBe(200);
    expect((await t.get(`/v1/accounts/${w.accountB.id}`, session.body.token)).status).toBe(404);

    // Once: the same code again is refused, and mints nothing.
    const again = await exchange(link.body.login_code);
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('invalid_login_code');

    const events = await t.get(`/v1/events?type=account.login_link.used&account_id=${w.accountA.id}`);
    expect(events.body.data).toHaveLength(1);
    expect(events.body.data[0].data).toMatchObject({ account_id: w.accountA.id, session_token_id: me.body.token.id });
  });

  it('a code older than 60 s, or unknown, is refused; housekeeping deletes the expired ones', async () => {
    const link = await makeLink(w.accountA.id, w.tokenA);
    t.clock.advance(60_001);
    expect((await exchange(link.body.login_code)).body.code).toBe('invalid_login_code');
    expect((await exchange('not-a-code')).status).toBe(401);
    await pruneLoginCodes(t.db, t.clock.now());
    expect((await t.db.query('SELECT 1 FROM login_codes WHERE expires_at < $1', [t.clock.now().toISOString()])).rows).toEqual([]);
  });

  it('the session is narrowed to the scopes and lifetime of the token that made the link', async () => {
    const expiresAt = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    const narrow = await createToken(
      t,
      { principal: { kind: 'reseller', id: w.resellerA.id }, scopes: ['accounts:read', 'tokens:write'], expires_at: expiresAt },
      w.tokenA,
    );
    const link = await makeLink(w.accountA.id, narrow);
    expect(link.status, link.text).toBe(201);
    const session = await exchange(link.body.login_code);
    expect(session.body.expires_at).toBe(expiresAt);
    expect((await t.get('/v1/me', session.body.token)).body.scopes).toEqual(['accounts:read', 'tokens:write']);
    expect((await t.post('/v1/domains', { account_id: w.accountA.id, name: 'narrow.example' }, session.body.token)).status).toBe(
      403,
    );
  });

  it("another reseller's account is 404, an account's own token 403, a token without tokens:write 403", async () => {
    expect((await makeLink(w.accountB.id, w.tokenA)).status).toBe(404);
    const own = await makeLink(w.accountA.id, w.tokenAccountA);
    expect(own.status).toBe(403);
    expect(own.body.code).toBe('forbidden');
    const scoped = await makeLink(w.accountA.id, w.readOnly);
    expect(scoped.status).toBe(403);
    expect(scoped.body.code).toBe('insufficient_scope');
    expect((await makeLink('acc_00000000000000000000000000', w.tokenA)).status).toBe(404);
  });

  it('a revoked maker takes its unexchanged links with it', async () => {
    const maker = await t.post('/v1/tokens', {
      name: 'billing',
      principal: { kind: 'reseller', id: w.resellerA.id },
      scopes: ['*'],
    });
    const link = await makeLink(w.accountA.id, maker.body.secret);
    expect((await t.request('DELETE', `/v1/tokens/${maker.body.id}`)).status).toBe(204);
    expect((await exchange(link.body.login_code)).body.code).toBe('invalid_login_code');
  });
});
