// Webhook answer time (issue 5: under 100 ms at p99, the work continuing in the workflow).
//   npm run bench:webhooks -- [--concurrency 8] [--seconds 5] [--tenants 20]
// The real gateway in this process (test defaults, your DATABASE_URL), its subscription workflows on a
// task queue of this run served by a worker of this run on the Temporal dev server. Each request is a
// signed Stripe invoice.payment_failed / invoice.paid with a fresh event id for one of `tenants`
// registered tenants: verification, receipt insert, signal-with-start, commit.
import { parseArgs } from 'node:util';
import { createBillingActivities } from '../activities/billing/subscription.activities';
import { createLogger } from '../common/logger';
import { newId } from '../common/ids';
import { createDbPool } from '../db/pool';
import { startTestGateway } from '../test/helpers/app';
import { capturedMail, stripeSignature } from '../test/helpers/billing';
import { migrateSharedDatabase, ownerUrl } from '../test/helpers/db';
import { registerAccount } from '../test/helpers/identity';
import { connectDevServer, createTestWorker, uniqueTaskQueue } from '../test/helpers/temporal';
import { measure, printPhases } from './lib/load';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { concurrency: { type: 'string', default: '8' }, seconds: { type: 'string', default: '5' }, tenants: { type: 'string', default: '20' } } });
  await migrateSharedDatabase();
  const owner = await createDbPool(ownerUrl(), { maxPoolSize: 4, name: 'bench-webhooks' });
  const server = await connectDevServer();
  const taskQueue = uniqueTaskQueue('bench-billing');
  const worker = await createTestWorker(server, {
    taskQueue, activities: { ...createBillingActivities({ ownerPool: owner, logger: createLogger('bench', 'silent') }), ...capturedMail().activities },
  });
  const running = worker.run();
  const gateway = await startTestGateway({ env: { BILLING_TASK_QUEUE: taskQueue, NOTIFY_TASK_QUEUE: taskQueue }, waitUntilReady: true });
  try {
    const tenants = await Promise.all(Array.from({ length: Number(values.tenants) }, () => registerAccount(gateway).then((a) => a.tenant.id)));
    let n = 0;
    const send = async () => {
      n += 1;
      const tenantId = tenants[n % tenants.length];
      const type = n % 2 ? 'invoice.payment_failed' : 'invoice.paid';
      const body = JSON.stringify({ id: `evt_${newId()}`, type, data: { object: { metadata: { tenantId } } } });
      const response = await fetch(`${gateway.baseUrl}/v1/billing/webhooks/stripe`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body) }, body,
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`webhook answered ${response.status}`);
    };
    await measure('warm-up', 2, 1, 200, send);
    printPhases([await measure(`stripe webhook, ${values.concurrency} concurrent`, Number(values.concurrency), Number(values.seconds), 1_000_000, send)]);
  } finally {
    await gateway.close();
    worker.shutdown();
    await running;
    await server.close();
    await owner.end();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
