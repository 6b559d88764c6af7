import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createTerminationActivities } from '../../activities/billing/termination.activities';
import { config } from '../../common/config';
import { createLogger } from '../../common/logger';
import { createObjectStore, type ObjectStore } from '../../common/object-store';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { selectTermination, type TerminationRecord } from '../../db/queries/billing/termination.queries';
import { withTenant } from '../../db/tenant';
import { RECORD_STEPS, type RecordStep } from '../../services/billing/termination-steps';
import { subscriptionWorkflowId } from '../../workflows/billing/billing.messages';
import { recoverTenantUpdate, terminationStateQuery, terminationWorkflowId } from '../../workflows/billing/termination.messages';
import { bundleWorkflows } from '../../workers/temporal/worker';
import { appUrl, migrateSharedDatabase } from '../helpers/db';
import { waitFor } from '../helpers/http';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';
import { liveSessions, objectExists, seedTerminationTenant, tenantDeletedAt } from '../helpers/termination';

const HOUR = 3_600_000;

describe('tenantTermination workflow (docs/reference/billing.md#rule-27)', () => {
  let env: TestWorkflowEnvironment;
  let owner: DatabasePool;
  let app: DatabasePool;
  let store: ObjectStore;
  let bundle: WorkflowBundleWithSourceMap;
  const logger = createLogger('test', 'silent');
  const settings = { terminationPhaseHours: 12, terminationBatchSize: 2 };

  beforeAll(async () => {
    await migrateSharedDatabase();
    [env, owner, app, bundle] = await Promise.all([
      createTimeSkippingEnv(),
      createDbPool(config().db.ownerUrl, { name: 'test-termination', maxPoolSize: 4 }),
      createDbPool(appUrl(), { name: 'test-termination-app', maxPoolSize: 4 }),
      bundleWorkflows(require.resolve('./fixtures/billing-termination.workflows')),
    ]);
    store = createObjectStore(config().s3);
  });
  afterAll(async () => {
    await env?.teardown();
    await owner?.end();
    await app?.end();
  });

  const mirrorOf = (tenantId: string): Promise<TerminationRecord | null> => withTenant(owner, tenantId, selectTermination);
  const workerFor = (taskQueue: string, recordSteps?: readonly RecordStep[]) => createTestWorker(env, {
    taskQueue, workflowBundle: bundle,
    activities: createTerminationActivities({ appPool: app, objectStore: store, logger, billingLimits: settings, recordSteps }),
  });

  it('runs deleting_records, deleting_files and completed over at least 24 hours; the audit archive stays', async () => {
    const fixture = await seedTerminationTenant(owner, store);
    const taskQueue = uniqueTaskQueue('termination');
    const worker = await workerFor(taskQueue);
    const before = await env.currentTimeMs();

    const result = await worker.runUntil(env.client.workflow.execute('tenantTermination', {
      taskQueue, workflowId: terminationWorkflowId(fixture.tenantId), args: [{ tenantId: fixture.tenantId }],
    }));

    expect(result).toMatchObject({ tenantId: fixture.tenantId, status: 'completed', phase: 'completed' });
    expect(await env.currentTimeMs() - before).toBeGreaterThanOrEqual(24 * HOUR);
    const mirror = await mirrorOf(fixture.tenantId);
    expect(mirror).toMatchObject({ status: 'completed', phase: 'completed', recoveredAt: null });
    expect(mirror!.progress).toEqual({
      records: { step: 3, counts: { sessions: 3, oneTimeTokens: 5, idempotencyKeys: 2 }, done: true },
      files: { deleted: 3, kept: 1, afterKey: [...fixture.fileKeys, fixture.auditKey].sort().at(-1), done: true },
    });
    expect(await liveSessions(owner, fixture.tenantId)).toBe(0);
    expect(await tenantDeletedAt(owner, fixture.tenantId)).not.toBeNull();
    for (const key of fixture.fileKeys) expect(await objectExists(store, key)).toBe(false);
    expect(await objectExists(store, fixture.auditKey)).toBe(true);

    // Recovery after completion is refused: the run is over, and nothing is restored.
    await expect(env.client.workflow.getHandle(terminationWorkflowId(fixture.tenantId)).executeUpdate(recoverTenantUpdate)).rejects.toThrow();
    expect(await tenantDeletedAt(owner, fixture.tenantId)).not.toBeNull();
  });

  it('resumes a phase that failed midway from its checkpoint: finished steps are not repeated, counts stay exact', async () => {
    const fixture = await seedTerminationTenant(owner, store, { sessions: 3, tokens: 5, keys: 2, files: 1 });
    const calls = { sessions: 0, oneTimeTokens: 0 };
    let failed = false;
    const steps: RecordStep[] = RECORD_STEPS.map((step) => ({
      name: step.name,
      async runBatch(db, tenantId, limit) {
        if (step.name in calls) calls[step.name as keyof typeof calls] += 1;
        // The worker "crashes" after the first batch of one-time tokens has committed.
        if (step.name === 'oneTimeTokens' && calls.oneTimeTokens === 2 && !failed) {
          failed = true;
          throw new Error('worker lost');
        }
        return step.runBatch(db, tenantId, limit);
      },
    }));
    const taskQueue = uniqueTaskQueue('termination');
    const worker = await workerFor(taskQueue, steps);

    const result = await worker.runUntil(env.client.workflow.execute('tenantTermination', {
      taskQueue, workflowId: terminationWorkflowId(fixture.tenantId), args: [{ tenantId: fixture.tenantId }],
    }));

    expect(result.status).toBe('completed');
    expect(failed).toBe(true);
    // Sessions: 3 rows in batches of 2 is two batches, run once only (the retry started at the token step).
    expect(calls.sessions).toBe(2);
    expect((await mirrorOf(fixture.tenantId))!.progress.records).toEqual({
      step: 3, counts: { sessions: 3, oneTimeTokens: 5, idempotencyKeys: 2 }, done: true,
    });
    const left = await owner.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*) AS n FROM one_time_tokens WHERE tenant_id = ${fixture.tenantId}
    `);
    expect(left).toBe(0);
  });

  it('recovers before completion: deletion stops, the tenant is restored and the subscription workflow is told', async () => {
    const fixture = await seedTerminationTenant(owner, store);
    const taskQueue = uniqueTaskQueue('termination');
    const worker = await workerFor(taskQueue);

    await worker.runUntil(async () => {
      const subscription = await env.client.workflow.start('subscriptionStub', { taskQueue, workflowId: subscriptionWorkflowId(fixture.tenantId) });
      const handle = await env.client.workflow.start('tenantTermination', {
        taskQueue, workflowId: terminationWorkflowId(fixture.tenantId), args: [{ tenantId: fixture.tenantId }],
      });
      // The records phase is done and the workflow waits out the rest of the phase (time does not
      // skip while no client waits for a result).
      await waitFor('the records phase to finish', async () => (await mirrorOf(fixture.tenantId))?.progress.records !== undefined
        && ((await mirrorOf(fixture.tenantId))!.progress.records as { done: boolean }).done);
      expect((await handle.query(terminationStateQuery)).phase).toBe('deleting_records');

      const recovered = await handle.executeUpdate(recoverTenantUpdate);
      expect(recovered).toMatchObject({ status: 'recovered', phase: 'deleting_records' });
      expect(await handle.result()).toMatchObject({ status: 'recovered' });
      expect(await subscription.result()).toBe('suspended');
    });

    expect(await mirrorOf(fixture.tenantId)).toMatchObject({ status: 'recovered', phase: 'deleting_records' });
    expect(await tenantDeletedAt(owner, fixture.tenantId)).toBeNull();
    // The files phase never ran.
    for (const key of fixture.fileKeys) expect(await objectExists(store, key)).toBe(true);
  });
});
