import Joi from 'joi';
import { defineRoute } from '../../../api/http/route-registry';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { addMembership, bearer, get, post, registerAccount } from '../../helpers/identity';
import { announced } from '../../helpers/rbac-versions';

/** A route declaring a permission: the gateway resolves it from the token's role names on every request. */
const guarded = defineRoute({
  namespace: 'gateway',
  method: 'GET',
  path: '/test/guarded',
  operationId: 'testGuarded',
  summary: 'Needs users.list',
  auth: 'bearer',
  permission: 'users.list',
  schemas: { response: { 200: Joi.object({ ok: Joi.boolean().required() }) } },
  handler(ctx) {
    ctx.body = { ok: true };
  },
});

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway({ routes: [guarded] });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'authorize-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

async function tokenIn(tenantId: string, roleName: string): Promise<string> {
  const account = await registerAccount(gateway);
  await addMembership(owner, tenantId, account.user.id, roleName);
  const switched = await post(gateway, '/auth/switch-tenant', { tenantId }, bearer(account.accessToken));
  return String(switched.body.accessToken);
}

describe('route permissions', () => {
  it('lets the owner, and a role granting the key, through; refuses a member with 403 forbidden', async () => {
    const tenant = await registerAccount(gateway);
    expect((await get(gateway, '/test/guarded', tenant.accessToken)).status).toBe(200);
    expect((await get(gateway, '/test/guarded', await tokenIn(tenant.tenant.id, 'admin'))).status).toBe(200);
    const denied = await get(gateway, '/test/guarded', await tokenIn(tenant.tenant.id, 'member'));
    expect(denied.status).toBe(403);
    expect(denied.body.type).toBe(gateway.problemType('forbidden'));
  });

  it('takes a role change into account on the next request (no permission in the token)', async () => {
    const tenant = await registerAccount(gateway);
    const token = await tokenIn(tenant.tenant.id, 'member');
    expect((await get(gateway, '/test/guarded', token)).status).toBe(403);
    await owner.query(sql.unsafe`UPDATE roles SET permissions = '{users.*}' WHERE tenant_id = ${tenant.tenant.id} AND name = 'member'`);
    // Changed outside the gateway's process: it applies once PostgreSQL announces it (migration 0020).
    await announced(gateway, owner, tenant.tenant.id);
    expect((await get(gateway, '/test/guarded', token)).status).toBe(200);
  });
});
