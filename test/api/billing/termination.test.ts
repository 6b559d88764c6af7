import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { setupOwner } from '../../../scripts/platform/setup-owner';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { get, GOOD_PASSWORD, registerAccount, uniqueEmail } from '../../helpers/identity';
import { login, send } from '../../helpers/users';

describe('GET /admin/tenants/:id/termination-status and POST /admin/tenants/:id/recover', () => {
  let gateway: TestGateway;
  let owner: DatabasePool;
  let platformToken: string;

  beforeAll(async () => {
    await migrateSharedDatabase();
    gateway = await startTestGateway();
    owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'termination-test-owner' });
    const email = uniqueEmail('platform-owner');
    await setupOwner(owner, { email, password: GOOD_PASSWORD }, () => undefined);
    platformToken = (await login(gateway, { email, password: GOOD_PASSWORD })).accessToken;
  });
  afterAll(async () => {
    await gateway?.close();
    await owner?.end();
  });

  const recordTermination = (tenantId: string, status: string, phase: string) => owner.query(sql.unsafe`
    INSERT INTO tenant_terminations (tenant_id, status, phase, progress, started_at, completed_at)
    VALUES (${tenantId}, ${status}, ${phase}, '{"records": {"done": true}}', '2026-03-01T00:00:00Z',
            ${status === 'completed' ? '2026-03-02T00:00:00Z' : null})
  `);

  it('shows the Platform Owner where a termination stands', async () => {
    const customer = await registerAccount(gateway);
    expect((await get(gateway, `/admin/tenants/${customer.tenant.id}/termination-status`, platformToken)).status).toBe(404);

    await recordTermination(customer.tenant.id, 'in_progress', 'deleting_files');
    const response = await get(gateway, `/admin/tenants/${customer.tenant.id}/termination-status`, platformToken);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      tenantId: customer.tenant.id, status: 'in_progress', phase: 'deleting_files', startedAt: '2026-03-01T00:00:00.000Z',
      progress: { records: { done: true } }, completedAt: null, recoveredAt: null,
    });
  });

  it('is the Platform Owner\'s only: a tenant owner gets 403, even for its own tenant', async () => {
    const customer = await registerAccount(gateway);
    await recordTermination(customer.tenant.id, 'in_progress', 'deleting_records');
    expect((await get(gateway, `/admin/tenants/${customer.tenant.id}/termination-status`, customer.accessToken)).status).toBe(403);
    expect((await send(gateway, 'POST', `/admin/tenants/${customer.tenant.id}/recover`, customer.accessToken)).status).toBe(403);
  });

  it('refuses to recover a termination that has completed (409), or a tenant never terminated (404)', async () => {
    const customer = await registerAccount(gateway);
    expect((await send(gateway, 'POST', `/admin/tenants/${customer.tenant.id}/recover`, platformToken)).status).toBe(404);
    await recordTermination(customer.tenant.id, 'completed', 'completed');
    const refused = await send(gateway, 'POST', `/admin/tenants/${customer.tenant.id}/recover`, platformToken);
    expect(refused.status).toBe(409);
    expect(refused.body.type).toBe(gateway.problemType('conflict'));
  });
});
