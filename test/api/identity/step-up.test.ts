import { decodeJwt } from 'jose';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { setupOwner } from '../../../scripts/platform/setup-owner';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { call, type JsonResponse } from '../../helpers/http';
import { addMembership, bearer, GOOD_PASSWORD, post, registerAccount, uniqueEmail, type RegisteredAccount } from '../../helpers/identity';
import { addMember, builtInRoleId, send } from '../../helpers/rbac';
import { login } from '../../helpers/users';

/**
 * Step-up for high-value actions (docs/reference/identity.md#rule-46, ASVS 4.3.3): access tokens carry
 * the sign-in time `auth_time`, refreshes and sessions opened from a session keep it, and the routes
 * declared `stepUp` refuse a sign-in older than STEP_UP_MAX_AGE_SECONDS with 401
 * reauthentication-required. A stale sign-in is made without waiting: by signing a token of the live
 * session with an old auth_time (the gateway's own token service), or by backdating the session's
 * stored sign-in time before a refresh.
 */
jest.setTimeout(60_000);

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  [gateway, owner] = await Promise.all([startTestGateway(), createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'step-up-test-owner' })]);
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

const nowSeconds = () => Math.floor(Date.now() / 1000);
const authTimeOf = (token: string) => decodeJwt(token).auth_time;

/** The same session and claims as `token`, signed again with the sign-in time `authTime`. */
async function withAuthTime(token: string, authTime: number): Promise<string> {
  const claims = decodeJwt(token);
  const signed = await gateway.runtime.identity.tokens.issueAccessToken({
    sub: String(claims.sub), email: String(claims.email), tenantId: String(claims.tenantId), roles: claims.roles as string[], sid: String(claims.sid), authTime,
    mfa: claims.mfa === true,
  });
  return signed.token;
}

function expectReauthentication(answer: JsonResponse): void {
  expect({ status: answer.status, type: answer.body.type, maxAge: answer.body.maxAge })
    .toEqual({ status: 401, type: gateway.problemType('reauthentication-required'), maxAge: 900 });
}

/** A tenant with a member and a custom role: every step-up route of the tenant, as [method, path, body]. */
async function stepUpRoutesOf(tenant: RegisteredAccount): Promise<[string, string, unknown][]> {
  const member = await addMember(gateway, owner, tenant.tenant.id);
  const role = await send<{ id: string }>(gateway, 'POST', '/roles', tenant.accessToken, { name: `auditor-${nowSeconds()}`, permission_ids: ['users.list'] });
  expect(role.status).toBe(201);
  const adminRole = await builtInRoleId(owner, tenant.tenant.id, 'admin');
  return [
    ['POST', '/api-keys', { name: 'step-up', permissions: ['users.list'] }],
    ['POST', `/users/${member.userId}/roles`, { role_id: adminRole }],
    ['POST', `/rbac/roles/${adminRole}/assign`, { user_id: member.userId }],
    ['PATCH', `/roles/${role.body.id}`, { permission_ids: ['users.list', 'roles.list'] }],
    ['PUT', `/rbac/roles/${role.body.id}`, { name: `auditor-b-${nowSeconds()}`, permissions: ['users.list'] }],
  ];
}

describe('auth_time', () => {
  it('is the time of the sign-in: registration and login carry the moment they proved the password', async () => {
    const before = nowSeconds();
    const tenant = await registerAccount(gateway);
    const session = await login(gateway, { email: tenant.user.email, password: GOOD_PASSWORD });
    const after = nowSeconds();
    for (const token of [tenant.accessToken, session.accessToken]) {
      expect(authTimeOf(token)).toBeGreaterThanOrEqual(before);
      expect(authTimeOf(token)).toBeLessThanOrEqual(after);
    }
  });

  it('is kept by every refresh, so a session used for hours does not count as a recent sign-in', async () => {
    const tenant = await registerAccount(gateway);
    const sid = String(decodeJwt(tenant.accessToken).sid);
    const signedInAt = nowSeconds() - 3600;
    await owner.query(sql.unsafe`UPDATE refresh_tokens SET authenticated_at = to_timestamp(${signedInAt}) WHERE family_id = ${sid}`);

    const first = await post<{ accessToken: string; refreshToken: string }>(gateway, '/auth/refresh', { refreshToken: tenant.refreshToken });
    expect(first.status).toBe(200);
    expect(authTimeOf(first.body.accessToken)).toBe(signedInAt);
    const second = await post<{ accessToken: string }>(gateway, '/auth/refresh', { refreshToken: first.body.refreshToken });
    expect(authTimeOf(second.body.accessToken)).toBe(signedInAt);
    expectReauthentication(await send(gateway, 'POST', '/api-keys', second.body.accessToken, { name: 'late', permissions: ['users.list'] }));
  });

  it('is kept by POST /auth/switch-tenant: a new session opened from an old one is no recent sign-in', async () => {
    const a = await registerAccount(gateway);
    const b = await registerAccount(gateway);
    await addMembership(owner, b.tenant.id, a.user.id, 'admin');
    const stale = await withAuthTime(a.accessToken, nowSeconds() - 1000);
    const switched = await post<{ accessToken: string }>(gateway, '/auth/switch-tenant', { tenantId: b.tenant.id }, bearer(stale));
    expect(switched.status).toBe(200);
    expect(authTimeOf(switched.body.accessToken)).toBe(authTimeOf(stale));
    expectReauthentication(await send(gateway, 'POST', '/api-keys', switched.body.accessToken, { name: 'b', permissions: ['users.list'] }));
  });
});

describe('routes of high-value actions', () => {
  it('refuse a sign-in older than STEP_UP_MAX_AGE_SECONDS with 401 reauthentication-required, changing nothing', async () => {
    const tenant = await registerAccount(gateway);
    const stale = await withAuthTime(tenant.accessToken, nowSeconds() - 901);
    for (const [method, path, body] of await stepUpRoutesOf(tenant)) {
      const answer = await send(gateway, method, path, stale, body);
      expect({ route: `${method} ${path}`, status: answer.status }).toEqual({ route: `${method} ${path}`, status: 401 });
      expectReauthentication(answer);
    }
    // Nothing was created: the refusal comes before the handler.
    const keys = await send<{ data: unknown[] }>(gateway, 'GET', '/api-keys', tenant.accessToken);
    expect(keys.body.data).toEqual([]);
    // Routes without a step-up still serve the old sign-in.
    expect((await send(gateway, 'GET', '/users', stale)).status).toBe(200);
    expect((await send(gateway, 'POST', '/roles', stale, { name: 'not-high-value', permission_ids: ['users.list'] })).status).toBe(201);
  });

  it('serve a recent sign-in; signing in again is how a user steps up', async () => {
    const tenant = await registerAccount(gateway);
    const stale = await withAuthTime(tenant.accessToken, nowSeconds() - 901);
    const routes = await stepUpRoutesOf(tenant);
    const [method, path, body] = routes[0];
    expectReauthentication(await send(gateway, method, path, stale, body));
    const fresh = await login(gateway, { email: tenant.user.email, password: GOOD_PASSWORD });
    for (const [each, at, sent] of routes) {
      const answer = await send(gateway, each, at, fresh.accessToken, sent);
      expect({ route: `${each} ${at}`, status: answer.status }).toEqual({ route: `${each} ${at}`, status: at === '/api-keys' ? 201 : 200 });
    }
  });

  it('refuse API keys with 403 where the route says so; a key may still create keys', async () => {
    const tenant = await registerAccount(gateway);
    const routes = await stepUpRoutesOf(tenant);
    const created = await send<{ key: string }>(gateway, 'POST', '/api-keys', tenant.accessToken, {
      name: 'rbac bot', permissions: ['api_keys.manage', 'roles.assign', 'roles.update', 'users.list'],
    });
    expect(created.status).toBe(201);
    const asKey = (method: string, path: string, body: unknown) => call(`${gateway.baseUrl}/v1${path}`, {
      method, headers: { 'x-api-key': created.body.key, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    for (const [method, path, body] of routes.slice(1)) {
      const answer = await asKey(method, path, body);
      expect({ route: `${method} ${path}`, status: answer.status, type: answer.body.type })
        .toEqual({ route: `${method} ${path}`, status: 403, type: gateway.problemType('forbidden') });
    }
    expect((await asKey(...routes[0])).status).toBe(201);
  });

  it('POST /auth/impersonate needs the Platform Owner\'s recent sign-in', async () => {
    const customer = await registerAccount(gateway);
    const email = uniqueEmail('platform-owner');
    await setupOwner(owner, { email, password: GOOD_PASSWORD }, () => undefined);
    const session = await login(gateway, { email, password: GOOD_PASSWORD });
    const body = { tenantId: customer.tenant.id, reason: 'Ticket 17: step-up check' };
    const stale = await withAuthTime(session.accessToken, nowSeconds() - 901);
    expectReauthentication(await post(gateway, '/auth/impersonate', body, bearer(stale)));
    const started = await post<{ accessToken: string }>(gateway, '/auth/impersonate', body, bearer(session.accessToken));
    expect(started.status).toBe(200);
    // The impersonation's session carries the Platform Owner's sign-in, not a new one.
    expect(authTimeOf(started.body.accessToken)).toBe(authTimeOf(session.accessToken));
  });
});
