import { ActivityFailure, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createMaintenanceActivities } from '../../activities/maintenance/expire-stale-records.activities';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { createDbPool, type DatabasePool } from '../../db/pool';
import { expireStaleRecords } from '../../workflows/maintenance/expire-stale-records.workflow';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';
import { remainingRecords, seedRecords } from './fixtures/expired-records';

// Bundling the workflows for the test worker alone can take seconds on a busy machine.
jest.setTimeout(60_000);

describe('expireStaleRecords workflow', () => {
  let env: TestWorkflowEnvironment;
  let ownerPool: DatabasePool;

  beforeAll(async () => {
    [env, ownerPool] = await Promise.all([
      createTimeSkippingEnv(),
      createDbPool(config().db.ownerUrl, { name: 'test-maintenance', maxPoolSize: 2 }),
    ]);
  });
  afterAll(async () => {
    await env?.teardown();
    await ownerPool?.end();
  });

  it('deletes expired idempotency keys, one-time tokens and refresh-token families in batches, and keeps live ones and families within the day of grace', async () => {
    const tenantId = newId();
    await seedRecords(ownerPool, tenantId, { expiredKeys: 5, liveKeys: 2, expiredTokens: 3, liveTokens: 1, expiredFamilies: 3, graceFamilies: 1, liveFamilies: 2 });
    const taskQueue = uniqueTaskQueue('maintenance');
    const activities = createMaintenanceActivities({ fleetPool: ownerPool, logger: createLogger('test', 'silent') });
    const worker = await createTestWorker(env, { taskQueue, activities });

    // A batch of 2 makes the activity loop: 5 expired keys take three statements.
    const counts = await worker.runUntil(env.client.workflow.execute(expireStaleRecords, {
      taskQueue, workflowId: `maintenance.expire-stale-records:test-${tenantId}`, args: [{ batchSize: 2 }],
    }));

    // Other tests' expired rows in the shared database may be swept too, so the counts are at least ours.
    expect(counts.idempotencyKeys).toBeGreaterThanOrEqual(5);
    expect(counts.oneTimeTokens).toBeGreaterThanOrEqual(3);
    expect(counts.refreshTokenFamilies).toBeGreaterThanOrEqual(3);
    expect(await remainingRecords(ownerPool, tenantId)).toEqual({
      expiredKeys: 0, liveKeys: 2, expiredTokens: 0, liveTokens: 1, expiredFamilies: 0, graceFamilies: 1, liveFamilies: 2,
    });
  });

  it('gives up after three attempts, so a broken database fails the run instead of retrying forever', async () => {
    let attempts = 0;
    const taskQueue = uniqueTaskQueue('maintenance');
    const worker = await createTestWorker(env, {
      taskQueue,
      activities: {
        async expireStaleRecords() {
          attempts += 1;
          throw new Error('database unavailable');
        },
      },
    });
    const before = await env.currentTimeMs();

    const run = worker.runUntil(env.client.workflow.execute(expireStaleRecords, {
      taskQueue, workflowId: `maintenance.expire-stale-records:test-${newId()}`, args: [{ batchSize: 10 }],
    }));

    const failure = await run.catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause).toBeInstanceOf(ActivityFailure);
    expect(attempts).toBe(3);
    // The 10 s and 20 s backoffs passed on the test server's clock, not the wall clock.
    expect(await env.currentTimeMs() - before).toBeGreaterThanOrEqual(30_000);
  });
});
