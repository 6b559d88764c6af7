import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createUsageSnapshotActivities, type UsageSnapshotResult } from '../../activities/billing/usage-snapshot.activities';
import { createLogger } from '../../common/logger';
import { newId } from '../../common/ids';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { adjustUsage, selectUsage } from '../../db/queries/billing/usage.queries';
import { withTenant } from '../../db/tenant';
import { appUrl, createMigratedDatabase, migrateSharedDatabase, ownerUrl, type MigratedDatabase } from '../helpers/db';

/** A bare tenant with a subscription on `planId`, written as the owner role. */
async function seedTenant(owner: DatabasePool, planId = 'starter'): Promise<string> {
  const tenantId = newId();
  await owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`INSERT INTO tenants (id, name) VALUES (${tenantId}, 'usage test')`);
    await tx.query(sql.unsafe`
      INSERT INTO subscriptions (id, tenant_id, plan_id, status, current_period_start, current_period_end)
      VALUES (${newId()}, ${tenantId}, ${planId}, 'active', now(), now() + interval '30 days')
    `);
  });
  return tenantId;
}

const utcDay = (offsetDays = 0) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

describe('usage counters (migration 0014)', () => {
  let owner: DatabasePool;
  let app: DatabasePool;

  beforeAll(async () => {
    await migrateSharedDatabase();
    owner = await createDbPool(ownerUrl(), { name: 'test-usage-owner', maxPoolSize: 4 });
    // Enough connections for the increments to really run side by side.
    app = await createDbPool(appUrl(), { name: 'test-usage-app', maxPoolSize: 20 });
  });
  afterAll(async () => {
    await owner?.end();
    await app?.end();
  });

  it('loses no update under concurrency: N parallel transactions add up exactly', async () => {
    const tenantId = await seedTenant(owner);
    const increments = Array.from({ length: 200 }, (_, i) => i % 7 + 1);
    await Promise.all(increments.map((delta) => withTenant(app, tenantId, async (tx) => {
      await adjustUsage(tx, 'records', delta);
      await adjustUsage(tx, 'storage_bytes', delta * 1024);
      await adjustUsage(tx, 'events_per_day', 1);
    })));
    const total = increments.reduce((sum, delta) => sum + delta, 0);
    const usage = await withTenant(app, tenantId, selectUsage);
    expect(usage).toMatchObject({ records: total, storageBytes: total * 1024, eventsPerDay: 200 });
  });

  it('counts with the caller\'s transaction: a rollback takes the adjustment back', async () => {
    const tenantId = await seedTenant(owner);
    await withTenant(app, tenantId, (tx) => adjustUsage(tx, 'modules', 2));
    await expect(withTenant(app, tenantId, async (tx) => {
      await adjustUsage(tx, 'modules', 1);
      throw new Error('the change failed');
    })).rejects.toThrow('the change failed');
    await withTenant(app, tenantId, (tx) => adjustUsage(tx, 'modules', -1));
    expect((await withTenant(app, tenantId, selectUsage)).modules).toBe(1);
  });

  it('never goes below zero and keeps tenants apart', async () => {
    const [a, b] = [await seedTenant(owner), await seedTenant(owner)];
    await withTenant(app, a, (tx) => adjustUsage(tx, 'records', 5));
    await withTenant(app, b, (tx) => adjustUsage(tx, 'records', -3));
    expect((await withTenant(app, a, selectUsage)).records).toBe(5);
    expect((await withTenant(app, b, selectUsage)).records).toBe(0);
  });

  it('events_per_day counts per UTC day: yesterday\'s events are not today\'s', async () => {
    const tenantId = await seedTenant(owner);
    await owner.query(sql.unsafe`INSERT INTO usage_daily_events (tenant_id, day, value) VALUES (${tenantId}, ${utcDay(-1)}::date, 40)`);
    await withTenant(app, tenantId, (tx) => adjustUsage(tx, 'events_per_day', 3));
    expect((await withTenant(app, tenantId, selectUsage)).eventsPerDay).toBe(3);
  });
});

/**
 * The snapshot spans every tenant with a subscription, so it runs on a scratch database: on the
 * shared one it would write snapshots for other files' tenants, and a tenant another file registers
 * between the two runs would make the second run insert a row.
 */
describe('usage snapshot (migration 0014)', () => {
  let db: MigratedDatabase;

  beforeAll(async () => {
    db = await createMigratedDatabase('billing_usage_snapshot');
  });
  afterAll(async () => {
    await db?.close();
  });

  it('snapshots a day once per tenant: a repeated run changes nothing', async () => {
    const { owner, app } = db;
    const tenantId = await seedTenant(owner, 'free');
    const day = utcDay(-1);
    await owner.query(sql.unsafe`INSERT INTO usage_daily_events (tenant_id, day, value) VALUES (${tenantId}, ${day}::date, 17)`);
    await withTenant(app, tenantId, (tx) => adjustUsage(tx, 'records', 12));
    const { snapshotUsage } = createUsageSnapshotActivities({ fleetPool: owner, logger: createLogger('test', 'silent') });

    const first: UsageSnapshotResult = await new MockActivityEnvironment().run(snapshotUsage, day);
    expect(first).toEqual({ day, tenants: 1, inserted: 1, purgedDailyEvents: 0 });
    await withTenant(app, tenantId, (tx) => adjustUsage(tx, 'records', 100));
    const second: UsageSnapshotResult = await new MockActivityEnvironment().run(snapshotUsage, day);
    expect(second).toEqual({ day, tenants: 1, inserted: 0, purgedDailyEvents: 0 });

    const row = await owner.one(sql.type(z.object({ records: z.number(), eventsPerDay: z.number(), planId: z.string(), limits: z.unknown() }))`
      SELECT records, events_per_day AS "eventsPerDay", plan_id AS "planId", limits FROM usage_snapshots WHERE tenant_id = ${tenantId} AND day = ${day}::date
    `);
    expect(row).toEqual({
      records: 12, eventsPerDay: 17, planId: 'free',
      limits: { users: 2, records: 1000, storageBytes: 104857600, eventsPerDay: 1000, modules: 1 },
    });
  });
});
