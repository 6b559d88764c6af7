import { decodeJwt } from 'jose';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { setupOwner } from '../../../scripts/platform/setup-owner';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { bearer, GOOD_PASSWORD, post, registerAccount, uniqueEmail } from '../../helpers/identity';
import { auditRecordsOf, createMember, login, send } from '../../helpers/users';

/**
 * POST /auth/impersonate end to end: the Platform Owner made by the setup command signs in, acts as
 * a tenant's user with a one-hour token that names it in `act`, and every audit record written
 * under that token names it as impersonator. Nobody else may impersonate.
 */
let gateway: TestGateway;
let owner: DatabasePool;
let platformOwner: { id: string; email: string; token: string; tenantId: string };

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'impersonation-test-owner' });
  const email = uniqueEmail('platform-owner');
  const setup = await setupOwner(owner, { email, password: GOOD_PASSWORD }, () => undefined);
  const session = await login(gateway, { email, password: GOOD_PASSWORD });
  platformOwner = { id: setup.userId, email, token: session.accessToken, tenantId: setup.tenantId };
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

interface Pair {
  accessToken: string;
  refreshToken: string;
  expiresAt: string;
}

const impersonate = (token: string, body: Record<string, unknown>) => post<Pair>(gateway, '/auth/impersonate', body, bearer(token));

describe('POST /auth/impersonate', () => {
  it('gives the Platform Owner a one-hour pair as the tenant’s owner, with the act claim and an audit record', async () => {
    const customer = await registerAccount(gateway);
    const started = Date.now();
    const response = await impersonate(platformOwner.token, { tenantId: customer.tenant.id, reason: 'Ticket 4711: billing page blank', note: 'with consent' });
    const answeredAt = Date.now();
    expect(response.status).toBe(200);

    const claims = decodeJwt(response.body.accessToken);
    expect(Object.keys(claims).sort()).toEqual(['act', 'aud', 'auth_time', 'email', 'exp', 'iat', 'iss', 'mfa', 'roles', 'sid', 'sub', 'tenantId']);
    expect(claims).toMatchObject({
      sub: customer.user.id, email: customer.user.email, tenantId: customer.tenant.id, roles: ['owner'], act: { sub: platformOwner.id },
    });
    // Whole seconds, both taken while the request ran: exp is the impersonation's end, one hour after
    // its start; iat is when the token was signed, a moment later (possibly in the next second).
    const startSecond = Math.floor(started / 1000) * 1000;
    expect(claims.iat! * 1000).toBeGreaterThanOrEqual(startSecond);
    expect(claims.iat! * 1000).toBeLessThanOrEqual(answeredAt);
    expect(claims.exp! * 1000).toBeGreaterThanOrEqual(startSecond + 3600_000);
    expect(claims.exp! * 1000).toBeLessThanOrEqual(answeredAt + 3600_000);
    expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(3600);
    expect(new Date(response.body.expiresAt).getTime()).toBe(claims.exp! * 1000);

    expect(await auditRecordsOf(owner, customer.tenant.id, 'auth.impersonation.started')).toEqual([expect.objectContaining({
      entityType: 'user', entityId: customer.user.id, actorId: platformOwner.id, impersonatorId: platformOwner.id,
      meta: { reason: 'Ticket 4711: billing page blank', note: 'with consent', expiresAt: response.body.expiresAt },
    })]);
  });

  it('acts in the tenant: an audited change made under the token names the Platform Owner as impersonator', async () => {
    const customer = await registerAccount(gateway);
    const member = await createMember(owner, customer.tenant.id, 'member');
    const { body: pair } = await impersonate(platformOwner.token, { tenantId: customer.tenant.id, reason: 'fix a typo' });

    const me = await send<{ id: string; tenantId: string }>(gateway, 'GET', '/auth/me', pair.accessToken);
    expect(me.body).toMatchObject({ id: customer.user.id, tenantId: customer.tenant.id });
    const patched = await send(gateway, 'PATCH', `/users/${member.id}`, pair.accessToken, { lastName: 'Corrected' });
    expect(patched.status).toBe(200);
    expect(await auditRecordsOf(owner, customer.tenant.id, 'auth.user.updated')).toEqual([
      expect.objectContaining({ entityId: member.id, actorId: customer.user.id, impersonatorId: platformOwner.id }),
    ]);

    // The same change by the owner itself names no impersonator.
    await send(gateway, 'PATCH', `/users/${member.id}`, customer.accessToken, { lastName: 'Again' });
    const records = await auditRecordsOf(owner, customer.tenant.id, 'auth.user.updated');
    expect(records[1]).toMatchObject({ actorId: customer.user.id, impersonatorId: null });
  });

  it('acts as the user named by userId, and refreshing keeps the actor and the end of the hour', async () => {
    const customer = await registerAccount(gateway);
    const member = await createMember(owner, customer.tenant.id, 'member');
    const { body: pair } = await impersonate(platformOwner.token, { tenantId: customer.tenant.id, reason: 'reproduce a bug', userId: member.id });
    const first = decodeJwt(pair.accessToken);
    expect(first).toMatchObject({ sub: member.id, roles: ['member'], act: { sub: platformOwner.id } });

    const refreshed = await post<Pair>(gateway, '/auth/refresh', { refreshToken: pair.refreshToken });
    expect(refreshed.status).toBe(200);
    const second = decodeJwt(refreshed.body.accessToken);
    expect(second).toMatchObject({ sub: member.id, act: { sub: platformOwner.id }, exp: first.exp });
    expect(refreshed.body.expiresAt).toBe(pair.expiresAt);
  });

  it('is refused to anyone but the Platform Owner: tenant owner, admin (403 forbidden) and member', async () => {
    const customer = await registerAccount(gateway);
    const target = await registerAccount(gateway);
    const admin = await createMember(owner, customer.tenant.id, 'admin');
    const member = await createMember(owner, customer.tenant.id, 'member');
    for (const token of [customer.accessToken, (await login(gateway, admin)).accessToken, (await login(gateway, member)).accessToken]) {
      const response = await impersonate(token, { tenantId: target.tenant.id, reason: 'curiosity' });
      expect(response.body).toMatchObject({ status: 403, type: gateway.problemType('forbidden') });
    }
    expect((await impersonate('', { tenantId: target.tenant.id, reason: 'x' })).status).toBe(401);
    expect(await auditRecordsOf(owner, target.tenant.id, 'auth.impersonation.started')).toEqual([]);
  });

  it('cannot be chained: an impersonation token does not start another impersonation', async () => {
    const customer = await registerAccount(gateway);
    const other = await registerAccount(gateway);
    const { body: pair } = await impersonate(platformOwner.token, { tenantId: customer.tenant.id, reason: 'support' });
    const chained = await impersonate(pair.accessToken, { tenantId: other.tenant.id, reason: 'hop' });
    expect(chained.body).toMatchObject({ status: 403 });
  });

  it('needs a reason, an existing customer tenant and a live member', async () => {
    const customer = await registerAccount(gateway);
    const missing = await impersonate(platformOwner.token, { tenantId: customer.tenant.id });
    expect(missing.body).toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'reason', code: 'REQUIRED' })] });
    const blank = await impersonate(platformOwner.token, { tenantId: customer.tenant.id, reason: '   ' });
    expect(blank.status).toBe(400);
    const unknownField = await impersonate(platformOwner.token, { tenantId: customer.tenant.id, reason: 'x', roles: ['admin'] });
    expect(unknownField.body).toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'roles', code: 'UNKNOWN_FIELD' })] });

    const unknownTenant = await impersonate(platformOwner.token, { tenantId: '0190a0a0-0000-7000-8000-000000000000', reason: 'x' });
    expect(unknownTenant.body).toMatchObject({ status: 404, type: gateway.problemType('not-found') });
    const platform = await impersonate(platformOwner.token, { tenantId: platformOwner.tenantId, reason: 'x' });
    expect(platform.body).toMatchObject({ status: 403 });
    const stranger = await registerAccount(gateway);
    const notMember = await impersonate(platformOwner.token, { tenantId: customer.tenant.id, reason: 'x', userId: stranger.user.id });
    expect(notMember.body).toMatchObject({ status: 404 });
  });
});
