// Records the committed histories of the webhook delivery (test/replay/histories/webhookDelivery/) on
// the time-skipping server with the real activities (PostgreSQL on the application role, HTTP to a
// local receiver): a delivery answered 204, one that failed all eight attempts and was dead-lettered,
// one whose failures turned the endpoint off after 5 days (the owners' mail started as a child), and
// a test delivery tried once. The generic `npm run record-history` cannot seed endpoints nor run a
// receiver. Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-webhook-delivery-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does.
import { createWebhookActivities } from '../../activities/events/webhooks.activities';
import { config } from '../../common/config';
import type { EventEnvelope } from '../../common/event-envelope';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { createDbPool } from '../../db/pool';
import { topics } from '../../services/events/topics';
import { webhookDeliveryWorkflowId, type WebhookDeliveryInput } from '../../workflows/events/webhooks.messages';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { seedFilesTenant } from '../helpers/files-scan';
import { uniqueTaskQueue } from '../helpers/temporal';
import { seedWebhookEndpoint, startWebhookReceiver, testWebhookPolicy } from '../helpers/webhooks';
import { createPlainTimeSkippingEnv, createRecordingWorker, runScript, writeHistories } from './recording';

runScript(async () => {
  await migrateSharedDatabase();
  const owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'record-webhook-delivery' });
  const app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'record-webhook-delivery-app' });
  const receiver = await startWebhookReceiver({ status: (path) => (path.startsWith('/fail') ? 500 : 204) });
  const env = await createPlainTimeSkippingEnv();
  const runs: Array<[name: string, workflowId: string]> = [];
  try {
    const { tenantId } = await seedFilesTenant(owner);
    const taskQueue = uniqueTaskQueue('record-webhook-delivery');
    const activities = createWebhookActivities({
      appPool: app, logger: createLogger('record-webhook-delivery', 'silent'), policy: testWebhookPolicy, consumers: config().consumers,
    });
    const worker = await createRecordingWorker(env, taskQueue, activities);
    const source = { topic: topics.data.name, partition: 0, offset: '1', key: 'item-1', correlationId: null };

    async function deliver(name: string, endpointId: string, bus: boolean): Promise<void> {
      const envelope: EventEnvelope = {
        id: newId(), type: bus ? 'test.item.changed' : 'webhook.test', source: 'test', tenantId, data: { n: 1 }, schemaVersion: '1.0.0',
        timestamp: new Date().toISOString(), traceId: null,
      };
      const input: WebhookDeliveryInput = { tenantId, endpointId, envelope, source: bus ? source : null, notifyTaskQueue: `${taskQueue}.notify` };
      const workflowId = webhookDeliveryWorkflowId(tenantId, endpointId, envelope.id);
      const result = await env.client.workflow.execute('webhookDelivery', { taskQueue, workflowId, args: [input] });
      console.log(name, JSON.stringify(result));
      runs.push([name, workflowId]);
    }

    await worker.runUntil(async () => {
      await deliver('v1-delivered', (await seedWebhookEndpoint(owner, tenantId, receiver.url('/ok'))).id, true);
      await deliver('v1-dead-lettered', (await seedWebhookEndpoint(owner, tenantId, receiver.url('/fail-all'))).id, true);
      const failing = (await seedWebhookEndpoint(owner, tenantId, receiver.url('/fail-days'))).id;
      await deliver('v1-first-failing', failing, true);
      await env.sleep('3 days');
      await deliver('v1-disabled', failing, true);
      await deliver('v1-test-failed', (await seedWebhookEndpoint(owner, tenantId, receiver.url('/fail-test'))).id, false);
    });
    // The first failing run only set the streak going; its history is the dead-lettered one's shape.
    await writeHistories(env.client, 'webhookDelivery', runs.filter(([name]) => name !== 'v1-first-failing'));
  } finally {
    await env.teardown();
    await receiver.close();
    await Promise.all([owner.end(), app.end()]);
  }
});
