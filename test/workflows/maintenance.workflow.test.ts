import { ActivityFailure, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createMaintenanceActivities } from '../../activities/maintenance/expire-stale-records.activities';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { expireStaleRecords } from '../../workflows/maintenance/expire-stale-records.workflow';
import { createMigratedDatabase, type MigratedDatabase } from '../helpers/db';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';
import { remainingRecords, seedRecords } from './fixtures/expired-records';

// Bundling the workflows for the test worker alone can take seconds on a busy machine.
jest.setTimeout(60_000);

/**
 * The sweep's workflow with its real activity, on a scratch database: on the shared one the sweep
 * would delete other files' expired rows, and another sweeper could take this file's rows first, so
 * its counts could not be exact.
 */
describe('expireStaleRecords workflow', () => {
  let env: TestWorkflowEnvironment;
  let db: MigratedDatabase;

  beforeAll(async () => {
    [env, db] = await Promise.all([createTimeSkippingEnv(), createMigratedDatabase('maintenance_workflow')]);
  });
  afterAll(async () => {
    await env?.teardown();
    await db?.close();
  });

  it('deletes expired idempotency keys, one-time tokens and refresh-token families in batches, and keeps live ones and families within the day of grace', async () => {
    const tenantId = newId();
    await seedRecords(db.owner, tenantId, { expiredKeys: 5, liveKeys: 2, expiredTokens: 3, liveTokens: 1, expiredFamilies: 3, graceFamilies: 1, liveFamilies: 2 });
    const taskQueue = uniqueTaskQueue('maintenance');
    const activities = createMaintenanceActivities({ fleetPool: db.owner, logger: createLogger('test', 'silent') });
    const worker = await createTestWorker(env, { taskQueue, activities });

    // A batch of 2 makes the activity loop: 5 expired keys take three statements.
    const counts = await worker.runUntil(env.client.workflow.execute(expireStaleRecords, {
      taskQueue, workflowId: `maintenance.expire-stale-records:test-${tenantId}`, args: [{ batchSize: 2 }],
    }));

    expect(counts).toEqual({ idempotencyKeys: 5, oneTimeTokens: 3, refreshTokenFamilies: 3, deadLetters: 0 });
    expect(await remainingRecords(db.owner, tenantId)).toEqual({
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
