import { newId } from '../../../common/ids';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { adjustUsage } from '../../../db/queries/billing/usage.queries';
import { withTenant } from '../../../db/tenant';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { setSubscription } from '../../helpers/billing';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { get, GOOD_PASSWORD, registerAccount, uniqueEmail, type RegisteredAccount } from '../../helpers/identity';
import { login } from '../../helpers/users';
import { setupOwner } from '../../../scripts/platform/setup-owner';

const month = () => new Date().toISOString().slice(0, 7);
describe('GET /billing/usage and /billing/usage/history', () => {
  let gateway: TestGateway;
  let owner: DatabasePool;
  let app: DatabasePool;
  let tenant: RegisteredAccount;

  beforeAll(async () => {
    await migrateSharedDatabase();
    owner = await createDbPool(ownerUrl(), { name: 'test-usage-api-owner', maxPoolSize: 2 });
    app = await createDbPool(appUrl(), { name: 'test-usage-api-app', maxPoolSize: 2 });
    gateway = await startTestGateway();
    tenant = await registerAccount(gateway);
    await withTenant(app, tenant.tenant.id, async (tx) => {
      await adjustUsage(tx, 'records', 2500);
      await adjustUsage(tx, 'events_per_day', 10);
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await owner?.end();
    await app?.end();
  });

  it('answers shape 2 by default: each metric {current, limit, percentage} with the plan', async () => {
    const response = await get(gateway, '/billing/usage', tenant.accessToken);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      tenantId: tenant.tenant.id, planId: 'starter', planName: 'Starter',
      usage: {
        users: { current: 1, limit: 5, percentage: 20 },
        records: { current: 2500, limit: 10000, percentage: 25 },
        storageBytes: { current: 0, limit: 1073741824, percentage: 0 },
        eventsPerDay: { current: 10, limit: 10000, percentage: 0.1 },
        modules: { current: 0, limit: 3, percentage: 0 },
      },
    });
  });

  it('answers shape 1 for period=YYYY-MM or shape=period', async () => {
    const expected = {
      tenantId: tenant.tenant.id, period: month(),
      usage: { users: 1, records: 2500, storageBytes: 0, eventsPerDay: 10, modules: 0 },
      limits: { users: 5, records: 10000, storageBytes: 1073741824, eventsPerDay: 10000, modules: 3 },
    };
    expect((await get(gateway, `/billing/usage?period=${month()}`, tenant.accessToken)).body).toEqual(expected);
    expect((await get(gateway, `/billing/usage?shape=period&tenant_id=${tenant.tenant.id}`, tenant.accessToken)).body).toEqual(expected);
  });

  it('shows unlimited as limit 0 with percentage null', async () => {
    const other = await registerAccount(gateway);
    await setSubscription(gateway, owner, other.tenant.id, { planId: 'enterprise' });
    const response = await get<{ usage: Record<string, unknown> }>(gateway, '/billing/usage', other.accessToken);
    expect(response.body.usage.users).toEqual({ current: 1, limit: 0, percentage: null });
  });

  it('answers another tenant\'s usage as not found (404), unknown tenant or not; the Platform Owner may read it', async () => {
    const other = await registerAccount(gateway);
    for (const tenantId of [tenant.tenant.id, newId()]) {
      const response = await get<{ type: string }>(gateway, `/billing/usage?tenant_id=${tenantId}`, other.accessToken);
      expect(response.status).toBe(404);
      expect(response.body.type).toBe(gateway.problemType('not-found'));
    }

    const email = uniqueEmail('platform-owner');
    await setupOwner(owner, { email, password: GOOD_PASSWORD }, () => undefined);
    const platform = await login(gateway, { email, password: GOOD_PASSWORD });
    const read = await get<{ tenantId: string; usage: { records: { current: number } } }>(
      gateway, `/billing/usage?tenant_id=${tenant.tenant.id}`, platform.accessToken);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ tenantId: tenant.tenant.id, usage: { records: { current: 2500 } } });
    expect((await get(gateway, `/billing/usage?tenant_id=${newId()}`, platform.accessToken)).status).toBe(404);
  });

  it('pages daily snapshots newest first, and answers a past period from its last snapshot', async () => {
    const days = ['2026-01-30', '2026-01-31', '2026-02-01'];
    for (const [i, day] of days.entries()) {
      await owner.query(sql.unsafe`
        INSERT INTO usage_snapshots (tenant_id, day, plan_id, users, records, storage_bytes, events_per_day, modules, limits)
        VALUES (${tenant.tenant.id}, ${day}::date, 'starter', 1, ${100 * (i + 1)}, 0, ${i}, 0,
                '{"users": 5, "records": 10000, "storageBytes": 1073741824, "eventsPerDay": 10000, "modules": 3}')
      `);
    }
    const first = await get<{ data: Array<{ date: string; usage: { records: number } }>; next_page_token?: string }>(
      gateway, '/billing/usage/history?page_size=2', tenant.accessToken);
    expect(first.status).toBe(200);
    expect(first.body.data.map((row) => row.date)).toEqual(['2026-02-01', '2026-01-31']);
    const second = await get<{ data: Array<{ date: string }>; next_page_token?: string }>(
      gateway, `/billing/usage/history?page_size=2&page_token=${first.body.next_page_token}`, tenant.accessToken);
    expect(second.body.data.map((row) => row.date)).toEqual(['2026-01-30']);
    expect(second.body.next_page_token).toBeUndefined();

    const january = await get<{ usage: { records: number } }>(gateway, '/billing/usage?period=2026-01', tenant.accessToken);
    expect(january.body.usage.records).toBe(200);
    expect((await get(gateway, '/billing/usage?period=2025-06', tenant.accessToken)).status).toBe(404);
    // Year 0000 does not exist: a validation error, not PostgreSQL's date out of range (it was a 500).
    expect((await get(gateway, '/billing/usage?period=0000-01', tenant.accessToken)).body)
      .toMatchObject({ status: 400, errors: [{ field: 'period', code: 'INVALID_FORMAT' }] });
    expect((await get(gateway, `/billing/usage/history?page_token=${newId()}`, tenant.accessToken)).status).toBe(400);
  });
});
