import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { RedeliveryBatch, RedeliveryResult } from '../../activities/billing/webhook-redelivery.activities';
import { newId } from '../../common/ids';
import { webhookRedelivery } from '../../workflows/billing/webhook-redelivery.workflow';
import { lifecycleSettings } from '../helpers/billing';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';

/**
 * The redelivery run's orchestration: batch after batch while they come back full, at most
 * maxBatches per run (the rest is the next run's). The activity itself runs against PostgreSQL and
 * the dev server in test/api/billing/webhook-delivery.test.ts; here it is a stand-in that reports a backlog.
 */
// The first test bundles the workflows, which takes seconds on a busy machine.
jest.setTimeout(60_000);

describe('webhookRedelivery workflow', () => {
  let env: TestWorkflowEnvironment;

  beforeAll(async () => {
    env = await createTimeSkippingEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  /** Runs the workflow against a backlog of `backlog` receipts; answers what it returned and the batches it asked for. */
  async function run(backlog: number, batchSize: number, maxBatches: number): Promise<{ delivered: number; batches: RedeliveryBatch[] }> {
    const taskQueue = uniqueTaskQueue('webhook-redelivery');
    const batches: RedeliveryBatch[] = [];
    let left = backlog;
    const worker = await createTestWorker(env, {
      taskQueue,
      activities: {
        async redeliverWebhookEvents(batch: RedeliveryBatch): Promise<RedeliveryResult> {
          batches.push(batch);
          const delivered = Math.min(left, batch.batchSize);
          left -= delivered;
          return { delivered, superseded: 0, more: delivered === batch.batchSize };
        },
      },
    });
    const target = { taskQueue: 'platform.billing', settings: lifecycleSettings('platform.notify') };
    const delivered = await worker.runUntil(env.client.workflow.execute(webhookRedelivery, {
      taskQueue, workflowId: `billing.webhook-redelivery:test-${newId()}`, args: [{ graceSeconds: 60, batchSize, maxBatches, target }],
    }));
    return { delivered, batches };
  }

  it('takes batches until one comes back short, passing the grace period and the target on', async () => {
    const { delivered, batches } = await run(5, 2, 10);
    expect(delivered).toBe(5);
    expect(batches).toHaveLength(3);
    expect(batches[0]).toEqual({ graceSeconds: 60, batchSize: 2, target: { taskQueue: 'platform.billing', settings: expect.objectContaining({ notifyTaskQueue: 'platform.notify' }) } });
  });

  it('stops after maxBatches, leaving the rest of a large backlog to the next run', async () => {
    const { delivered, batches } = await run(100, 10, 3);
    expect(delivered).toBe(30);
    expect(batches).toHaveLength(3);
  });

  it('does nothing more when nothing is due', async () => {
    expect((await run(0, 10, 3)).delivered).toBe(0);
  });
});
