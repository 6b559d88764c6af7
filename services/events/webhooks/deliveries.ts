import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { EventEnvelope } from '../../../common/event-envelope';
import { currentRequestContext } from '../../../common/context';
import { newId } from '../../../common/ids';
import { problems } from '../../../common/problems';
import { withTenant } from '../../../db/tenant';
import { jobIdOf, type JobKind } from '../../../common/jobs';
import {
  webhookDeliveryWorkflowId, type WebhookDeliveryInput, type WebhookDeliveryResult, type WebhookDeliveryWorkflow,
} from '../../../workflows/events/webhooks.messages';
import { selectWebhookEndpoint } from '../../../db/queries/events/webhooks.queries';
import type { WebhookDeps } from './deps';

/**
 * Starting deliveries (workflows/events/webhook-delivery.workflow.ts), one workflow per endpoint
 * and event under `webhook.delivery:<tenantId>:<endpointId>:<eventId>`: by the dispatcher for the
 * bus's events (dispatcher.ts), and by POST /webhooks/endpoints/{id}/test for a `webhook.test` event.
 */

/**
 * Starts the delivery, or finds it: an event the bus hands over twice (`again` false) never starts a
 * second delivery, however long ago the first ended (REJECT_DUPLICATE). A dead letter's retry
 * (`again` true) starts a new run of the same workflow id once the earlier one has ended.
 */
export async function startDelivery(client: Client, taskQueue: string, input: WebhookDeliveryInput, again: boolean): Promise<void> {
  const { tenantId, endpointId, envelope } = input;
  try {
    await client.workflow.start<WebhookDeliveryWorkflow>('webhookDelivery', {
      taskQueue,
      workflowId: webhookDeliveryWorkflowId(tenantId, endpointId, envelope.id),
      args: [input],
      workflowIdReusePolicy: again ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      staticSummary: `Delivers ${envelope.type} ${envelope.id} to webhook endpoint ${endpointId}`,
    });
  } catch (error) {
    // Delivered (or dead-lettered) before: the bus handed the event over once more.
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** The kind of a test delivery's job (GET /v1/jobs/{jobId}): `webhook-test.<endpointId>_<eventId>`. */
export const WEBHOOK_TEST_JOB = 'webhook-test';

/** Managing endpoints needs it; following a test delivery's job too. */
export const WEBHOOKS_MANAGE_PERMISSION = 'webhooks.manage';

/** The type of the event POST /webhooks/endpoints/{id}/test sends. */
export const WEBHOOK_TEST_EVENT_TYPE = 'webhook.test';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const TEST_LOCAL_ID = new RegExp(`^(${UUID})_(${UUID})$`);

/** A test delivery is done when its workflow is; its result is the workflow's (delivered or failed, the answer's status). */
export const webhookTestJobKind: JobKind = {
  name: WEBHOOK_TEST_JOB,
  title: 'webhook test delivery',
  permission: WEBHOOKS_MANAGE_PERMISSION,
  localId: TEST_LOCAL_ID,
  workflowId(tenantId, localId) {
    const [, endpointId, eventId] = TEST_LOCAL_ID.exec(localId)!;
    return webhookDeliveryWorkflowId(tenantId, endpointId, eventId);
  },
  async outcome(execution) {
    if (execution.status !== 'completed') return undefined;
    return { completedAt: null, result: await execution.handle.result() as WebhookDeliveryResult };
  },
};

/**
 * POST /webhooks/endpoints/{id}/test: a `webhook.test` event of its own, sent to this endpoint now
 * (whether it is enabled or not, whatever its eventTypes say), signed like any other. It is tried
 * once: no retry, no dead letter. Answers the job's id.
 */
export async function sendTestEvent(deps: WebhookDeps, tenantId: string, endpointId: string): Promise<{ jobId: string; eventId: string }> {
  const endpoint = await withTenant(deps.db, tenantId, (tx) => selectWebhookEndpoint(tx, tenantId, endpointId));
  if (!endpoint) throw problems.notFound('webhook endpoint');
  const temporal = deps.temporal();
  if (!temporal) throw problems.unavailable('The workflow service is not connected; try again shortly');
  const envelope: EventEnvelope = {
    id: newId(), type: WEBHOOK_TEST_EVENT_TYPE, source: 'events', tenantId, schemaVersion: '1.0.0',
    timestamp: new Date().toISOString(), traceId: currentRequestContext()?.traceId ?? null,
    data: { endpointId, message: 'A test event sent with POST /v1/webhooks/endpoints/{id}/test' },
  };
  try {
    const input: WebhookDeliveryInput = { tenantId, endpointId, envelope, source: null, notifyTaskQueue: deps.taskQueues.notify };
    await startDelivery(temporal.client, deps.taskQueues.events, input, false);
  } catch (error) {
    throw problems.unavailable('The test delivery could not be started; try again', error);
  }
  return { jobId: jobIdOf(WEBHOOK_TEST_JOB, `${endpointId}_${envelope.id}`), eventId: envelope.id };
}
