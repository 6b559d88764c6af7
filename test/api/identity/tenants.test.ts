import { decodeJwt } from 'jose';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { addMembership, bearer, get, post, registerAccount } from '../../helpers/identity';

/** GET /v1/auth/me and POST /auth/switch-tenant across tenants: a token sees its own tenant only. */
let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'tenants-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

describe('GET /auth/me', () => {
  it('answers the User of docs/reference/identity.md with the roles and permissions of the token’s tenant', async () => {
    const account = await registerAccount(gateway, { firstName: 'Ada', lastName: 'Lovelace' });
    const response = await get(gateway, '/auth/me', account.accessToken);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: account.user.id, email: account.user.email, firstName: 'Ada', lastName: 'Lovelace', avatarUrl: null,
      tenantId: account.tenant.id, roles: ['owner'], permissions: ['*'], emailVerified: false, mfaEnabled: false,
      status: 'active', createdAt: expect.any(String), updatedAt: expect.any(String), deletedAt: null,
    });
  });

  it('shows a member of two tenants only the roles of the token’s tenant', async () => {
    const a = await registerAccount(gateway);
    const b = await registerAccount(gateway);
    await addMembership(owner, b.tenant.id, a.user.id, 'admin');
    const switched = await post(gateway, '/auth/switch-tenant', { tenantId: b.tenant.id }, bearer(a.accessToken));
    const inB = await get<{ roles: string[]; permissions: string[] }>(gateway, '/auth/me', String(switched.body.accessToken));
    expect(inB.body.roles).toEqual(['admin']);
    expect(inB.body.permissions).not.toContain('*');
    expect(inB.body.permissions).toContain('users.create');
  });

  it('stops answering once the membership is gone, though the token is still unexpired', async () => {
    const a = await registerAccount(gateway);
    const b = await registerAccount(gateway);
    await addMembership(owner, b.tenant.id, a.user.id);
    const switched = await post(gateway, '/auth/switch-tenant', { tenantId: b.tenant.id }, bearer(a.accessToken));
    await owner.query(sql.unsafe`
      DELETE FROM memberships WHERE tenant_id = ${b.tenant.id} AND user_id = ${a.user.id}
    `);
    expect((await get(gateway, '/auth/me', String(switched.body.accessToken))).status).toBe(401);
  });
});

describe('POST /auth/switch-tenant', () => {
  it('issues a pair scoped to another tenant of the caller', async () => {
    const a = await registerAccount(gateway);
    const b = await registerAccount(gateway);
    await addMembership(owner, b.tenant.id, a.user.id);
    const response = await post(gateway, '/auth/switch-tenant', { tenantId: b.tenant.id }, bearer(a.accessToken));
    expect(response.status).toBe(200);
    expect(decodeJwt(String(response.body.accessToken))).toMatchObject({ sub: a.user.id, tenantId: b.tenant.id, roles: ['member'] });
    // The refresh token is scoped to the new tenant too.
    const refreshed = await post(gateway, '/auth/refresh', { refreshToken: response.body.refreshToken });
    expect(decodeJwt(String(refreshed.body.accessToken))).toMatchObject({ tenantId: b.tenant.id });
  });

  it('answers 404 not-found, never 403, for a tenant the caller does not belong to', async () => {
    const a = await registerAccount(gateway);
    const b = await registerAccount(gateway);
    const response = await post(gateway, '/auth/switch-tenant', { tenantId: b.tenant.id }, bearer(a.accessToken));
    expect(response.body).toMatchObject({ status: 404, type: gateway.problemType('not-found') });
    const unknown = await post(gateway, '/auth/switch-tenant', { tenantId: '0190a0a0-0000-7000-8000-000000000000' }, bearer(a.accessToken));
    expect(unknown.body).toMatchObject({ status: 404, type: gateway.problemType('not-found') });
  });

  it('needs a bearer token and a UUID', async () => {
    const a = await registerAccount(gateway);
    expect((await post(gateway, '/auth/switch-tenant', { tenantId: a.tenant.id })).status).toBe(401);
    const invalid = await post(gateway, '/auth/switch-tenant', { tenantId: 'tenant-b' }, bearer(a.accessToken));
    expect(invalid.body).toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'tenantId', code: 'INVALID_FORMAT' })] });
    // Tenant ids are UUID v4 or v7: a valid UUID of another version is the same 400 (it was a 500).
    const v3 = await post(gateway, '/auth/switch-tenant', { tenantId: 'e2bc1114-2734-327b-ad8d-cd4e3cf83276' }, bearer(a.accessToken));
    expect(v3.body).toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'tenantId', code: 'INVALID_FORMAT' })] });
  });
});
