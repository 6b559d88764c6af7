import { ScheduleOverlapPolicy, type ScheduleHandle } from '@temporalio/client';
import { createMaintenanceActivities } from '../../activities/maintenance/expire-stale-records.activities';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { ensureSchedule, expireStaleRecordsSchedule } from '../../workers/schedules';
import { createMigratedDatabase, type MigratedDatabase } from '../helpers/db';
import { connectDevServer, createTestWorker, uniqueTaskQueue, type DevServer } from '../helpers/temporal';
import { remainingRecords, seedRecords } from '../workflows/fixtures/expired-records';

/** Polls `probe` until it returns a value (Schedule actions and listings appear asynchronously). */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`nothing after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * The maintenance Schedule on the real Temporal dev server, under its own id and task queue so the
 * platform's real schedule is untouched: created once however often workers start, and a triggered
 * run completes the sweep through a real Worker and PostgreSQL. The sweep runs on a scratch database:
 * on the shared one it would delete other files' expired rows, and another sweeper could take this
 * file's rows first, so its counts could not be exact.
 */
describe('maintenance.expire-stale-records schedule', () => {
  let server: DevServer;
  let db: MigratedDatabase;
  const taskQueue = uniqueTaskQueue('maintenance');
  const scheduleId = `test.maintenance.expire-stale-records.${newId()}`;
  const settings = { scheduleId, taskQueue, intervalMinutes: 60, batchSize: 100 };
  let schedule: ScheduleHandle;

  beforeAll(async () => {
    [server, db] = await Promise.all([connectDevServer(), createMigratedDatabase('maintenance_schedule')]);
    schedule = server.client.schedule.getHandle(scheduleId);
  });
  afterAll(async () => {
    await schedule?.delete().catch(() => undefined);
    await server?.close();
    await db?.close();
  });

  it('is created once and brought up to date when ensured again', async () => {
    expect(await ensureSchedule(server.client, expireStaleRecordsSchedule(settings))).toBe('created');
    expect(await ensureSchedule(server.client, expireStaleRecordsSchedule({ ...settings, intervalMinutes: 30 }))).toBe('updated');

    const description = await schedule.describe();
    expect(description.spec.intervals).toMatchObject([{ every: 30 * 60_000 }]);
    expect(description.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);
    expect(description.action).toMatchObject({ workflowType: 'expireStaleRecords', taskQueue, args: [{ batchSize: 100 }] });
    // A fleet-wide sweep: its BusinessKind (common/temporal/search-attributes.ts) and no tenant.
    const attributes = description.action.type === 'startWorkflow' ? description.action.typedSearchAttributes : undefined;
    expect(Array.isArray(attributes) ? attributes : attributes?.getAll())
      .toEqual([{ key: { name: 'BusinessKind', type: 'KEYWORD' }, value: 'maintenance.expire-stale-records' }]);
    const listed = await eventually(async () => {
      const ids: string[] = [];
      for await (const summary of server.client.schedule.list()) {
        if (summary.scheduleId === scheduleId) ids.push(summary.scheduleId);
      }
      return ids.length ? ids : undefined;
    });
    expect(listed).toHaveLength(1);
  });

  it('runs the sweep to completion when triggered', async () => {
    const tenantId = newId();
    await seedRecords(db.owner, tenantId, { expiredKeys: 2, liveKeys: 1, expiredTokens: 1, liveTokens: 1, expiredFamilies: 1, graceFamilies: 1, liveFamilies: 1 });
    const maintenance = createMaintenanceActivities({ fleetPool: db.owner, logger: createLogger('test', 'silent') });
    const worker = await createTestWorker(server, { taskQueue, activities: maintenance });
    await ensureSchedule(server.client, expireStaleRecordsSchedule(settings));

    const counts = await worker.runUntil(async () => {
      await schedule.trigger();
      const workflowId = await eventually(async () => (await schedule.describe()).info.recentActions.at(-1)?.action.workflow.workflowId);
      expect(workflowId).toMatch(new RegExp(`^${scheduleId}-`));
      return server.client.workflow.getHandle(workflowId).result();
    });

    expect(counts).toEqual({ idempotencyKeys: 2, oneTimeTokens: 1, refreshTokenFamilies: 1, deadLetters: 0 });
    expect(await remainingRecords(db.owner, tenantId)).toEqual({
      expiredKeys: 0, liveKeys: 1, expiredTokens: 0, liveTokens: 1, expiredFamilies: 0, graceFamilies: 1, liveFamilies: 1,
    });
  });
});
