import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { waitFor, type JsonResponse } from '../../helpers/http';
import { addMembership, bearer, get, GOOD_PASSWORD, post, registerAccount } from '../../helpers/identity';
import { turnOnMfa } from '../../helpers/mfa';
import { login, outboxOfType, send, type Session } from '../../helpers/users';

/**
 * POST /auth/change-password (ASVS 2.1.6; docs/reference/identity.md, Rules: password change and
 * security mail): the current password (and a code with two-factor on) proves the account again;
 * the new one passes the registration policy; the other sessions end in every tenant, this one stays.
 */
const ACCOUNT_ATTEMPTS = 3;
const NEW_PASSWORD = 'another-quiet-harbour-77';
let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  [gateway, owner] = await Promise.all([
    startTestGateway({ env: { LOGIN_THROTTLE_ACCOUNT_ATTEMPTS: String(ACCOUNT_ATTEMPTS) } }),
    createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'change-password-test-owner' }),
  ]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), owner?.end()]);
});

const change = (token: string, body: Record<string, unknown>) => post(gateway, '/auth/change-password', body, bearer(token));

function expectProblem(response: JsonResponse, status: number, type: string): void {
  expect({ status: response.status, type: response.body.type }).toEqual({ status, type: gateway.problemType(type) });
}

describe('POST /auth/change-password', () => {
  it('changes the password, ends every other session in every tenant and keeps this one', async () => {
    const account = await registerAccount(gateway);
    const team = await registerAccount(gateway, { tenantName: 'Change Team' });
    // Another session in the account's own tenant, and one in the team's.
    const elsewhere: Session = await login(gateway, { email: account.user.email, password: account.password });
    await addMembership(owner, team.tenant.id, account.user.id);
    const inTeam = await post<Session>(gateway, '/auth/switch-tenant', { tenantId: team.tenant.id }, bearer(elsewhere.accessToken));
    expect(inTeam.status).toBe(200);

    const changed = await change(account.accessToken, { currentPassword: account.password, newPassword: NEW_PASSWORD });
    expect(changed.status).toBe(204);

    // This session goes on: its access token works and its refresh token rotates.
    expect((await get(gateway, '/auth/me', account.accessToken)).status).toBe(200);
    expect((await post(gateway, '/auth/refresh', { refreshToken: account.refreshToken })).status).toBe(200);
    // The others are over: refresh tokens at once, access tokens once the gateway heard of it (migration 0039).
    for (const ended of [elsewhere, inTeam.body]) {
      expectProblem(await post(gateway, '/auth/refresh', { refreshToken: ended.refreshToken }), 401, 'unauthorized');
      await waitFor('the ended session\'s access token to be refused', async () => (await get(gateway, '/auth/me', ended.accessToken)).status === 401, 10_000, 20);
    }
    // The old password no longer signs in; the new one does.
    expectProblem(await post(gateway, '/auth/login', { email: account.user.email, password: account.password }), 401, 'invalid-credentials');
    expect((await post(gateway, '/auth/login', { email: account.user.email, password: NEW_PASSWORD })).status).toBe(200);

    const [event] = await outboxOfType(owner, account.tenant.id, 'auth.password.changed');
    expect(event).toMatchObject({ partitionKey: account.user.id, data: { user_id: account.user.id, method: 'change', sessions_revoked: 2 } });
  });

  it('refuses a wrong current password with 401 invalid-credentials, counted like a failed login', async () => {
    const account = await registerAccount(gateway);
    for (let attempt = 0; attempt <= ACCOUNT_ATTEMPTS; attempt += 1) {
      expectProblem(await change(account.accessToken, { currentPassword: 'not-the-password', newPassword: NEW_PASSWORD }), 401, 'invalid-credentials');
    }
    // Past the free attempts the account is slowed, here and at the login alike.
    expectProblem(await change(account.accessToken, { currentPassword: account.password, newPassword: NEW_PASSWORD }), 429, 'rate-limit-exceeded');
    expectProblem(await post(gateway, '/auth/login', { email: account.user.email, password: account.password }), 429, 'rate-limit-exceeded');
    expect(await outboxOfType(owner, account.tenant.id, 'auth.password.changed')).toEqual([]);
  });

  it.each([
    ['a password under 12 characters', 'short-pw-1', 'TOO_SHORT'],
    ['a breached password', 'Qwerty123456', 'BREACHED_PASSWORD'],
  ])('refuses %s as the new one with 400', async (_, newPassword, code) => {
    const account = await registerAccount(gateway);
    const refused = await change(account.accessToken, { currentPassword: account.password, newPassword });
    expectProblem(refused, 400, 'validation-error');
    expect((refused.body.errors as { field: string; code: string }[]).map(({ field, code: c }) => ({ field, code: c }))).toEqual([{ field: 'newPassword', code }]);
    expect((await login(gateway, { email: account.user.email, password: account.password })).accessToken).toEqual(expect.any(String));
  });

  it('needs a current code when two-factor is on', async () => {
    const account = await registerAccount(gateway);
    const { authenticator } = await turnOnMfa(gateway, account);
    const body = { currentPassword: account.password, newPassword: NEW_PASSWORD };
    expectProblem(await change(account.accessToken, body), 401, 'mfa-required');
    expectProblem(await change(account.accessToken, { ...body, code: authenticator.lastCode() }), 401, 'mfa-invalid');
    expect((await change(account.accessToken, { ...body, code: await authenticator.nextCode() })).status).toBe(204);
    // The new password is the one the login now takes (it asks for the code next).
    expectProblem(await post(gateway, '/auth/login', { email: account.user.email, password: NEW_PASSWORD }), 401, 'mfa-required');
  });

  it('is refused to an API key with 403 and to no caller with 401', async () => {
    const account = await registerAccount(gateway);
    const created = await send<{ key: string }>(gateway, 'POST', '/api-keys', account.accessToken, { name: 'sync', permissions: ['users.list'] });
    expect(created.status).toBe(201);
    const body = { currentPassword: account.password, newPassword: NEW_PASSWORD };
    expectProblem(await post(gateway, '/auth/change-password', body, { 'x-api-key': created.body.key }), 403, 'forbidden');
    expectProblem(await post(gateway, '/auth/change-password', body), 401, 'unauthorized');
    expect((await login(gateway, { email: account.user.email, password: GOOD_PASSWORD })).accessToken).toEqual(expect.any(String));
  });
});
