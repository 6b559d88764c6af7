import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { GOOD_PASSWORD, outboxEventsOf, post, registerAccount, uniqueEmail } from '../../helpers/identity';

/** POST /v1/auth/register: the account, its tenant and everything a tenant has from its first second. */
let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'register-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

describe('registration', () => {
  it('answers 201 with a token pair, the owner user and the tenant', async () => {
    const email = uniqueEmail('Ada');
    const response = await post(gateway, '/auth/register', { email, password: GOOD_PASSWORD, firstName: 'Ada', tenantName: 'Analytical Engines' });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      accessToken: expect.any(String),
      refreshToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expiresAt: expect.any(String),
      tenant: { id: expect.any(String), name: 'Analytical Engines' },
      user: {
        email: email.toLowerCase(), firstName: 'Ada', lastName: '', roles: ['owner'], emailVerified: false,
        mfaEnabled: false, status: 'active', deletedAt: null, avatarUrl: null,
      },
    });
    const body = response.body as { user: { tenantId: string }; tenant: { id: string } };
    expect(body.user.tenantId).toBe(body.tenant.id);
  });

  it('creates the built-in roles, the owner assignment and a 14-day trial on starter', async () => {
    const account = await registerAccount(gateway);
    const roles = await owner.any(sql.type(z.object({ name: z.string(), permissions: z.array(z.string()), builtIn: z.boolean() }))`
      SELECT name, permissions, built_in AS "builtIn" FROM roles WHERE tenant_id = ${account.tenant.id} ORDER BY name
    `);
    expect(roles.map((role) => role.name)).toEqual(['admin', 'member', 'owner']);
    expect(roles.every((role) => role.builtIn)).toBe(true);
    expect(roles.find((role) => role.name === 'owner')!.permissions).toEqual(['*']);
    const admin = roles.find((role) => role.name === 'admin')!.permissions;
    expect(admin).toEqual(expect.arrayContaining(['users.create', 'roles.assign', 'billing.view']));
    expect(admin.some((key) => key.startsWith('system.'))).toBe(false);
    expect(roles.find((role) => role.name === 'member')!.permissions).toEqual([]);

    const subscription = await owner.one(sql.type(z.object({ planId: z.string(), status: z.string(), trialDays: z.number() }))`
      SELECT plan_id AS "planId", status, round(extract(epoch FROM trial_ends_at - created_at) / 86400)::int AS "trialDays"
      FROM subscriptions WHERE tenant_id = ${account.tenant.id}
    `);
    expect(subscription).toEqual({ planId: 'starter', status: 'trialing', trialDays: 14 });
  });

  it('writes auth.user.created to the outbox of the new tenant, with the UserCreatedEvent fields', async () => {
    const account = await registerAccount(gateway, { firstName: 'Grace', lastName: 'Hopper' });
    const events = await outboxEventsOf(owner, account.tenant.id);
    const created = events.find((event) => event.type === 'auth.user.created');
    expect(created).toMatchObject({
      partitionKey: account.user.id,
      data: {
        user_id: account.user.id, email: account.user.email, display_name: 'Grace Hopper', role: 'owner',
        tenant_id: account.tenant.id, created_at: expect.any(String),
      },
    });
  });

  it('answers 409 conflict for an address already registered, whatever its case, and creates nothing', async () => {
    const account = await registerAccount(gateway);
    const tenantName = `duplicate ${account.user.id}`;
    const again = await post(gateway, '/auth/register', { email: account.user.email.toUpperCase(), password: GOOD_PASSWORD, tenantName });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ type: gateway.problemType('conflict') });
    // The refused registration's tenant went with its transaction.
    const count = (query: ReturnType<typeof sql.unsafe>) => owner.oneFirst(sql.type(z.object({ n: z.number() }))`${query}`);
    expect(await count(sql.unsafe`SELECT count(*)::int AS n FROM tenants WHERE name = ${tenantName}`)).toBe(0);
    expect(await count(sql.unsafe`SELECT count(*)::int AS n FROM users WHERE lower(email) = lower(${account.user.email})`)).toBe(1);
  });
});

describe('registration validation', () => {
  const valid = () => ({ email: uniqueEmail(), password: GOOD_PASSWORD });

  it.each([
    ['a password under 12 characters', { password: 'short-pw-1' }, 'password', 'TOO_SHORT'],
    ['a breached password', { password: 'password1234' }, 'password', 'BREACHED_PASSWORD'],
    ['a breached password in other case', { password: 'Qwerty123456' }, 'password', 'BREACHED_PASSWORD'],
    ['an invalid e-mail', { email: 'not-an-address' }, 'email', 'INVALID_FORMAT'],
    ['a missing e-mail', { email: undefined }, 'email', 'REQUIRED'],
    ['an unknown field', { role: 'owner' }, 'role', 'UNKNOWN_FIELD'],
    ['a wrong type', { firstName: 42 }, 'firstName', 'INVALID_TYPE'],
    ['an oversized field', { lastName: 'x'.repeat(101) }, 'lastName', 'TOO_LONG'],
    ['an oversized password', { password: 'x'.repeat(257) }, 'password', 'TOO_LONG'],
  ])('refuses %s with 400 validation-error', async (_case, change, field, code) => {
    const response = await post(gateway, '/auth/register', { ...valid(), ...change });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ type: gateway.problemType('validation-error') });
    expect(response.body.errors).toEqual([expect.objectContaining({ field, code })]);
  });
});
