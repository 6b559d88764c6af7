import argon2 from 'argon2';
import { z } from 'zod';
import { config } from '../../../common/config';
import { ARGON2_OPTIONS, verifyPassword } from '../../../services/identity/passwords';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import {
  addMembership, get, GOOD_PASSWORD, outboxEventsOf, post, registerAccount, uniqueEmail, type RegisteredAccount,
} from '../../helpers/identity';

/** POST /v1/auth/login and /auth/select-tenant, GET /auth/tenants. */
let gateway: TestGateway;
let owner: DatabasePool;

// A low account threshold so the slowing shows after a few failures; the IP threshold is out of
// reach, because every test (and every other test file) logs in from 127.0.0.1.
const ACCOUNT_ATTEMPTS = 3;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway({
    env: { LOGIN_THROTTLE_ACCOUNT_ATTEMPTS: String(ACCOUNT_ATTEMPTS) },
  });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'login-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

const login = (email: string, password: string) => post(gateway, '/auth/login', { email, password });

/** An account that belongs to two tenants: its own, and the tenant of a second account as member. */
async function twoTenantAccount(): Promise<{ account: RegisteredAccount; other: RegisteredAccount }> {
  const account = await registerAccount(gateway, { tenantName: 'First' });
  const other = await registerAccount(gateway, { tenantName: 'Second' });
  await addMembership(owner, other.tenant.id, account.user.id, 'member');
  return { account, other };
}

describe('login with one tenant', () => {
  it('answers a token pair for the tenant and writes auth.user.logged_in', async () => {
    const account = await registerAccount(gateway);
    const response = await login(account.user.email.toUpperCase(), account.password);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['accessToken', 'expiresAt', 'refreshToken']);
    const me = await get(gateway, '/auth/me', String(response.body.accessToken));
    expect(me.body).toMatchObject({ id: account.user.id, tenantId: account.tenant.id, roles: ['owner'], permissions: ['*'] });
    const events = await outboxEventsOf(owner, account.tenant.id);
    expect(events.find((event) => event.type === 'auth.user.logged_in')).toMatchObject({
      partitionKey: account.user.id, data: { user_id: account.user.id, tenant_id: account.tenant.id, method: 'password' },
    });
  });

  it('answers the same 401 invalid-credentials for a wrong password and an unknown address', async () => {
    const account = await registerAccount(gateway);
    const wrong = await login(account.user.email, 'not-the-password-at-all');
    const unknown = await login(uniqueEmail('nobody'), 'not-the-password-at-all');
    for (const response of [wrong, unknown]) {
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ type: gateway.problemType('invalid-credentials') });
    }
    expect(wrong.body.detail).toBe(unknown.body.detail);
  });

  it('refuses a soft-deleted account as invalid credentials, and a locked one as account-locked', async () => {
    const deleted = await registerAccount(gateway);
    const locked = await registerAccount(gateway);
    await owner.query(sql.unsafe`UPDATE users SET deleted_at = now() WHERE id = ${deleted.user.id}`);
    await owner.query(sql.unsafe`UPDATE users SET status = 'locked' WHERE id = ${locked.user.id}`);
    expect((await login(deleted.user.email, deleted.password)).body).toMatchObject({ status: 401, type: gateway.problemType('invalid-credentials') });
    expect((await login(locked.user.email, locked.password)).body).toMatchObject({ status: 403, type: gateway.problemType('account-locked') });
    // The lock is told only to someone who knows the password.
    expect((await login(locked.user.email, 'a-wrong-password')).body).toMatchObject({ type: gateway.problemType('invalid-credentials') });
  });

  it('slows an account after repeated failures with 429 and Retry-After, and the right password waits too', async () => {
    const account = await registerAccount(gateway);
    for (let attempt = 0; attempt < ACCOUNT_ATTEMPTS; attempt += 1) {
      expect((await login(account.user.email, 'a-wrong-password')).status).toBe(401);
    }
    // One failure past the free attempts starts the wait.
    expect((await login(account.user.email, 'a-wrong-password')).status).toBe(401);
    const slowed = await login(account.user.email, account.password);
    expect(slowed.status).toBe(429);
    expect(slowed.body).toMatchObject({ type: gateway.problemType('rate-limit-exceeded'), retryAfter: expect.any(Number) });
    expect(Number(slowed.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Other accounts are not affected.
    const bystander = await registerAccount(gateway);
    expect((await login(bystander.user.email, bystander.password)).status).toBe(200);
  });

  it('validates its body', async () => {
    const response = await post(gateway, '/auth/login', { email: 'not-an-address', password: 42, remember: true });
    expect(response.status).toBe(400);
    expect((response.body.errors as { field: string; code: string }[]).map(({ field, code }) => ({ field, code }))).toEqual(
      expect.arrayContaining([
        { field: 'email', code: 'INVALID_FORMAT' }, { field: 'password', code: 'INVALID_TYPE' }, { field: 'remember', code: 'UNKNOWN_FIELD' },
      ]),
    );
  });
});

describe('login with several tenants', () => {
  it('asks for a tenant, then select-tenant issues a pair for the chosen one', async () => {
    const { account, other } = await twoTenantAccount();
    const selection = await login(account.user.email, GOOD_PASSWORD);
    expect(selection.status).toBe(200);
    expect(selection.body).toMatchObject({ requiresTenantSelection: true, sessionToken: expect.any(String) });
    expect(selection.body.tenants).toEqual([
      { id: account.tenant.id, name: 'First', logoUrl: null, role: 'owner' },
      { id: other.tenant.id, name: 'Second', logoUrl: null, role: 'member' },
    ]);

    const chosen = await post(gateway, '/auth/select-tenant', { sessionToken: selection.body.sessionToken, tenantId: other.tenant.id });
    expect(chosen.status).toBe(200);
    const me = await get(gateway, '/auth/me', String(chosen.body.accessToken));
    expect(me.body).toMatchObject({ tenantId: other.tenant.id, roles: ['member'], permissions: [] });
    // Without rememberChoice the next login asks again.
    expect((await login(account.user.email, GOOD_PASSWORD)).body).toMatchObject({ requiresTenantSelection: true });
  });

  it('remembers the choice when asked, so the next login selects that tenant', async () => {
    const { account, other } = await twoTenantAccount();
    const sessionsIn = async (tenantId: string) => (await outboxEventsOf(owner, tenantId))
      .filter((event) => event.type === 'auth.user.logged_in' && event.data.user_id === account.user.id);
    const selection = await login(account.user.email, GOOD_PASSWORD);
    // Asked to choose, the login opened no session anywhere.
    expect([await sessionsIn(account.tenant.id), await sessionsIn(other.tenant.id)]).toEqual([[], []]);
    await post(gateway, '/auth/select-tenant', { sessionToken: selection.body.sessionToken, tenantId: other.tenant.id, rememberChoice: true });
    const next = await login(account.user.email, GOOD_PASSWORD);
    expect(next.body).toMatchObject({ accessToken: expect.any(String) });
    expect((await get(gateway, '/auth/me', String(next.body.accessToken))).body).toMatchObject({ tenantId: other.tenant.id });
    // select-tenant's session, then the remembered login's, both in the chosen tenant.
    expect((await sessionsIn(other.tenant.id)).map((event) => event.data.tenant_id)).toEqual([other.tenant.id, other.tenant.id]);
    expect(await sessionsIn(account.tenant.id)).toEqual([]);
  });

  it('ignores a remembered tenant the user does not belong to: it asks again and opens nothing there', async () => {
    const { account } = await twoTenantAccount();
    const stranger = await registerAccount(gateway);
    await owner.query(sql.unsafe`UPDATE users SET last_tenant_id = ${stranger.tenant.id} WHERE id = ${account.user.id}`);
    const selection = await login(account.user.email, GOOD_PASSWORD);
    expect(selection.body).toMatchObject({ requiresTenantSelection: true });
    expect((selection.body.tenants as { id: string }[]).map((tenant) => tenant.id)).not.toContain(stranger.tenant.id);
    const strangersEvents = await outboxEventsOf(owner, stranger.tenant.id);
    expect(strangersEvents.filter((event) => event.data.user_id === account.user.id)).toEqual([]);
  });

  it('refuses a tenant the user does not belong to with 404, and a forged session token with 401', async () => {
    const { account } = await twoTenantAccount();
    const stranger = await registerAccount(gateway);
    const selection = await login(account.user.email, GOOD_PASSWORD);
    const foreign = await post(gateway, '/auth/select-tenant', { sessionToken: selection.body.sessionToken, tenantId: stranger.tenant.id });
    expect(foreign.body).toMatchObject({ status: 404, type: gateway.problemType('not-found') });
    const forged = await post(gateway, '/auth/select-tenant', { sessionToken: account.accessToken, tenantId: account.tenant.id });
    expect(forged.body).toMatchObject({ status: 401, type: gateway.problemType('unauthorized') });
  });

  it('lists the tenants of the caller', async () => {
    const { account, other } = await twoTenantAccount();
    const response = await get<{ data: { id: string; role: string }[] }>(gateway, '/auth/tenants', account.accessToken);
    expect(response.status).toBe(200);
    expect(response.body.data.map(({ id, role }) => ({ id, role }))).toEqual([
      { id: account.tenant.id, role: 'owner' }, { id: other.tenant.id, role: 'member' },
    ]);
  });
});

describe('password storage', () => {
  const storedHash = (userId: string) =>
    owner.oneFirst(sql.type(z.object({ hash: z.string() }))`SELECT password_hash AS hash FROM users WHERE id = ${userId}`);
  /** The pepper's marker among the hash's parameters (services/identity/passwords.ts). */
  const PEPPERED = /^\$argon2id\$v=19\$m=19456,p=1,t=2,data=cGVwcGVyOjE\$/;

  it('keeps an Argon2id hash with the OWASP parameters and the pepper, never the password', async () => {
    const account = await registerAccount(gateway);
    const hash = await storedHash(account.user.id);
    expect(hash).toMatch(PEPPERED);
    expect(hash).not.toContain(account.password);
  });

  it('signs in with a hash made before the pepper, and leaves a peppered one in its place (ASVS 2.4.5)', async () => {
    const account = await registerAccount(gateway);
    const legacy = await argon2.hash(account.password, ARGON2_OPTIONS);
    await owner.query(sql.unsafe`UPDATE users SET password_hash = ${legacy} WHERE id = ${account.user.id}`);

    // A wrong password changes nothing.
    expect((await login(account.user.email, `${account.password}-wrong`)).status).toBe(401);
    expect(await storedHash(account.user.id)).toBe(legacy);

    expect((await login(account.user.email, account.password)).status).toBe(200);
    const upgraded = await storedHash(account.user.id);
    expect(upgraded).toMatch(PEPPERED);
    await expect(verifyPassword(config().identity.passwordPepper, upgraded, account.password)).resolves.toBe(true);
    // The database alone no longer verifies it: the pepper is not in it.
    await expect(argon2.verify(upgraded, account.password)).resolves.toBe(false);
    // The next sign-in verifies the new hash and keeps it.
    expect((await login(account.user.email, account.password)).status).toBe(200);
    expect(await storedHash(account.user.id)).toBe(upgraded);
  });
});
