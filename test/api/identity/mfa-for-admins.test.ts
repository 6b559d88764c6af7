import { decodeJwt } from 'jose';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { setupOwner } from '../../../scripts/platform/setup-owner';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { call, type JsonResponse } from '../../helpers/http';
import { addMembership, bearer, get, GOOD_PASSWORD, post, registerAccount, uniqueEmail, type RegisteredAccount } from '../../helpers/identity';
import { turnOnMfa } from '../../helpers/mfa';
import { addMember, send } from '../../helpers/rbac';
import { login } from '../../helpers/users';

/**
 * REQUIRE_MFA_FOR_ADMINS (docs/reference/identity.md#rule-48 and #rule-49, ASVS 4.3.1): a gateway with the
 * setting on answers a member holding management permissions without two-factor 403 mfa-enrollment-required
 * everywhere but the enrolment routes, /auth/me, the caller's tenants and sessions, logout and refresh; the
 * access token's `mfa` claim says whether two-factor was on when it was issued, so enrolling and refreshing
 * gets through. A gateway with the setting off (the default) is the control. Both share the database and
 * signing keys, so a token of one is a token of the other.
 */
jest.setTimeout(90_000);

let gated: TestGateway;
let plain: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  [gated, plain, owner] = await Promise.all([
    startTestGateway({ env: { REQUIRE_MFA_FOR_ADMINS: 'true' } }),
    startTestGateway(),
    createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'mfa-for-admins-test-owner' }),
  ]);
});

afterAll(async () => {
  await gated?.close();
  await plain?.close();
  await owner?.end();
});

const mfaClaimOf = (token: string) => decodeJwt(token).mfa;

function expectEnrollmentRequired(answer: JsonResponse): void {
  expect({ status: answer.status, type: answer.body.type }).toEqual({ status: 403, type: gated.problemType('mfa-enrollment-required') });
}

async function refreshed(gateway: TestGateway, refreshToken: string): Promise<{ accessToken: string; refreshToken: string }> {
  const answer = await post<{ accessToken: string; refreshToken: string }>(gateway, '/auth/refresh', { refreshToken });
  expect(answer.status).toBe(200);
  return answer.body;
}

describe('an owner without two-factor, setting on', () => {
  it('gets 403 mfa-enrollment-required on the tenant\'s routes, can still enrol, and gets through after a refresh', async () => {
    const tenant = await registerAccount(gated);
    expect(mfaClaimOf(tenant.accessToken)).toBe(false);
    expectEnrollmentRequired(await get(gated, '/users', tenant.accessToken));
    expectEnrollmentRequired(await get(gated, '/roles', tenant.accessToken));
    expectEnrollmentRequired(await call(`${gated.baseUrl}/health`, { headers: bearer(tenant.accessToken) }));
    expectEnrollmentRequired(await post(gated, '/auth/change-password', { currentPassword: GOOD_PASSWORD, newPassword: 'another-zebra-staple-42' },
      bearer(tenant.accessToken)));

    // What enrolling needs stays open.
    for (const path of ['/auth/me', '/auth/sessions', '/auth/tenants']) {
      expect({ path, status: (await get(gated, path, tenant.accessToken)).status }).toEqual({ path, status: 200 });
    }
    await turnOnMfa(gated, tenant);

    // The token still says two-factor was off when it was issued; a refresh reads the account again.
    expectEnrollmentRequired(await get(gated, '/users', tenant.accessToken));
    const pair = await refreshed(gated, tenant.refreshToken);
    expect(mfaClaimOf(pair.accessToken)).toBe(true);
    expect((await get(gated, '/users', pair.accessToken)).status).toBe(200);
  });

  it('may end its sessions and log out', async () => {
    const tenant = await registerAccount(gated);
    const other = await login(gated, { email: tenant.user.email, password: GOOD_PASSWORD });
    expect((await send(gated, 'DELETE', '/auth/sessions', tenant.accessToken)).status).toBe(204);
    expect((await post(gated, '/auth/refresh', { refreshToken: other.refreshToken })).status).toBe(401);
    expect((await post(gated, '/auth/logout', { refreshToken: tenant.refreshToken }, bearer(tenant.accessToken))).status).toBe(204);
  });

  it('gets through once signed in with two-factor: login, tenant selection and switch carry the claim', async () => {
    const tenant = await registerAccount(gated);
    const { authenticator } = await turnOnMfa(gated, tenant);
    const signedIn = await post<{ accessToken: string }>(gated, '/auth/login', {
      email: tenant.user.email, password: GOOD_PASSWORD, mfaCode: await authenticator.nextCode(),
    });
    expect(signedIn.status).toBe(200);
    expect(mfaClaimOf(signedIn.body.accessToken)).toBe(true);
    expect((await get(gated, '/users', signedIn.body.accessToken)).status).toBe(200);

    // An admin of a second tenant too: the next login asks for a tenant, and every session reads the account's state.
    const other = await registerAccount(plain);
    await addMembership(owner, other.tenant.id, tenant.user.id, 'admin');
    const selection = await post<{ sessionToken: string }>(gated, '/auth/login', {
      email: tenant.user.email, password: GOOD_PASSWORD, mfaCode: await authenticator.nextCode(),
    });
    expect(selection.body).toMatchObject({ requiresTenantSelection: true });
    const selected = await post<{ accessToken: string }>(gated, '/auth/select-tenant', { sessionToken: selection.body.sessionToken, tenantId: other.tenant.id });
    expect(selected.status).toBe(200);
    expect(mfaClaimOf(selected.body.accessToken)).toBe(true);
    expect((await get(gated, '/users', selected.body.accessToken)).status).toBe(200);
    const switched = await post<{ accessToken: string }>(gated, '/auth/switch-tenant', { tenantId: tenant.tenant.id }, bearer(selected.body.accessToken));
    expect(switched.status).toBe(200);
    expect(mfaClaimOf(switched.body.accessToken)).toBe(true);
    expect((await get(gated, '/roles', switched.body.accessToken)).status).toBe(200);
  });
});

describe('who the setting holds to it', () => {
  it('leaves a member without management permissions alone, and catches a custom role that holds one', async () => {
    const tenant = await registerAccount(plain);
    await turnOnMfa(plain, tenant);
    const fresh = await refreshed(plain, tenant.refreshToken);
    const reader = await send<{ id: string }>(plain, 'POST', '/roles', fresh.accessToken, { name: 'reader', permission_ids: ['users.list'] });
    const granter = await send<{ id: string }>(plain, 'POST', '/roles', fresh.accessToken, { name: 'granter', permission_ids: ['users.list', 'roles.assign'] });
    expect([reader.status, granter.status]).toEqual([201, 201]);

    // The member came from its own registration, so it owns a tenant of its own: there it owes two-factor.
    const member = await addMember(plain, owner, tenant.tenant.id);
    expect(mfaClaimOf(member.token)).toBe(false);
    expect((await get(gated, '/auth/tenants', member.token)).status).toBe(200);
    const ownTenant = (await get<{ data: { id: string }[] }>(gated, '/auth/tenants', member.token)).body.data.find((t) => t.id !== tenant.tenant.id)!;
    const home = await post<{ accessToken: string }>(gated, '/auth/switch-tenant', { tenantId: ownTenant.id }, bearer(member.token));
    expect(home.status).toBe(200);
    expectEnrollmentRequired(await get(gated, '/users', home.body.accessToken));
    expect((await get(gated, '/users', member.token)).body.type).toBe(gated.problemType('forbidden'));

    // Given through the gateway that checks: another would tell it by an announcement, not before the next request.
    expect((await send(gated, 'POST', `/users/${member.userId}/roles`, fresh.accessToken, { role_id: reader.body.id })).status).toBe(200);
    expect((await get(gated, '/users', member.token)).status).toBe(200);

    // Permissions are read per request, not from the token: the role just given takes effect on the same token.
    expect((await send(gated, 'POST', `/users/${member.userId}/roles`, fresh.accessToken, { role_id: granter.body.id })).status).toBe(200);
    expectEnrollmentRequired(await get(gated, '/users', member.token));
  });

  it('does not hold API keys to it', async () => {
    const tenant = await registerAccount(plain);
    const created = await post<{ key: string }>(plain, '/api-keys', { name: 'machine', permissions: ['api_keys.manage', 'users.list'] },
      bearer(tenant.accessToken));
    expect(created.status).toBe(201);
    const asKey = await call(`${gated.baseUrl}/v1/api-keys`, { headers: { 'x-api-key': created.body.key } });
    expect(asKey.status).toBe(200);
    expectEnrollmentRequired(await get(gated, '/api-keys', tenant.accessToken));
  });

  it('holds the Platform Owner to it, and not the impersonation the enrolled Platform Owner starts', async () => {
    const customer = await registerAccount(plain);
    const email = uniqueEmail('platform-owner');
    await setupOwner(owner, { email, password: GOOD_PASSWORD }, () => undefined);
    const session = await login(gated, { email, password: GOOD_PASSWORD });
    const body = { tenantId: customer.tenant.id, reason: 'Ticket 36: two-factor for administrators' };
    expectEnrollmentRequired(await post(gated, '/auth/impersonate', body, bearer(session.accessToken)));

    const platformOwner = { accessToken: session.accessToken } as RegisteredAccount;
    const { authenticator } = await turnOnMfa(gated, platformOwner);
    const signedIn = await post<{ accessToken: string }>(gated, '/auth/login', { email, password: GOOD_PASSWORD, mfaCode: await authenticator.nextCode() });
    expect(signedIn.status).toBe(200);
    const started = await post<{ accessToken: string }>(gated, '/auth/impersonate', body, bearer(signedIn.body.accessToken));
    expect(started.status).toBe(200);
    // The customer's owner has no two-factor, and its claim says so; the Platform Owner behind the token has.
    expect(mfaClaimOf(started.body.accessToken)).toBe(false);
    expect((await get(gated, '/users', started.body.accessToken)).status).toBe(200);
  });
});

describe('setting off (the default)', () => {
  it('changes nothing for an owner without two-factor', async () => {
    const tenant = await registerAccount(plain);
    expect(mfaClaimOf(tenant.accessToken)).toBe(false);
    for (const path of ['/users', '/roles', '/api-keys']) {
      expect({ path, status: (await get(plain, path, tenant.accessToken)).status }).toEqual({ path, status: 200 });
    }
  });
});
