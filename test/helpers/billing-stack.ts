import type { Worker } from '@temporalio/worker';
import { createBillingActivities } from '../../activities/billing/subscription.activities';
import type { Logger } from '../../common/logger';
import { createLogger } from '../../common/logger';
import { createDbPool, type DatabasePool } from '../../db/pool';
import { startTestGateway, type TestGateway } from './app';
import { appUrl, migrateSharedDatabase, ownerUrl } from './db';
import { createTestWorker, connectDevServer, terminateRunningOn, uniqueTaskQueue, type DevServer } from './temporal';

export interface BillingStack {
  gateway: TestGateway;
  owner: DatabasePool;
  server: DevServer;
  /** Where this stack's subscription workflows, notices and mails run. */
  taskQueue: string;
  close(): Promise<void>;
}

/**
 * The billing API tests' stack: the real gateway, with subscription workflows and their notices
 * (and the verification mail) sent to a worker of this test on a queue of its own, on the dev server.
 * `activities` adds to the billing activities (the mail capture, the redelivery sweep).
 */
export async function startBillingStack(
  name: string, activities: (deps: { appPool: DatabasePool; fleetPool: DatabasePool; logger: Logger }) => object,
): Promise<BillingStack> {
  await migrateSharedDatabase();
  const taskQueue = uniqueTaskQueue(name);
  const owner = await createDbPool(ownerUrl(), { maxPoolSize: 4, name: `${name}-test-owner` });
  const app = await createDbPool(appUrl(), { maxPoolSize: 4, name: `${name}-test-app` });
  const server = await connectDevServer();
  const deps = { appPool: app, fleetPool: owner, logger: createLogger('test', 'silent') };
  const worker: Worker = await createTestWorker(server, {
    taskQueue,
    activities: { ...createBillingActivities(deps), ...activities(deps) },
  });
  const running = worker.run();
  const gateway = await startTestGateway({ env: { BILLING_TASK_QUEUE: taskQueue, NOTIFY_TASK_QUEUE: taskQueue }, waitUntilReady: true });
  return {
    gateway, owner, server, taskQueue,
    async close() {
      await gateway.close();
      worker.shutdown();
      await running;
      await terminateRunningOn(server.client, taskQueue);
      await server.close();
      await Promise.all([owner.end(), app.end()]);
    },
  };
}
