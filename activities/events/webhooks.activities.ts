import { activityInfo, metricMeter } from '@temporalio/activity';
import type { Logger } from '../../common/logger';
import {
  attemptWebhook, deadLetterWebhook, webhookOwnerEmails, type WebhookAttemptDeps,
} from '../../services/events/webhooks/attempt';
import type {
  WebhookAttemptInput, WebhookAttemptResult, WebhookDeadLetterInput,
} from '../../workflows/events/webhooks.messages';

export interface WebhookActivityDeps extends WebhookAttemptDeps {
  /** Bound to the running activity's context by the worker (contextBoundLogger). */
  logger: Logger;
}

/**
 * The delivery workflow's steps (workflows/events/webhook-delivery.workflow.ts): thin adapters over
 * services/events/webhooks/attempt.ts. Each attempt is counted on the worker's metrics endpoint
 * (the SDK's Prometheus endpoint, WORKER_METRICS_PORT, with its `temporal_` prefix):
 * `webhook_delivery_attempts{outcome}` and the request's `webhook_delivery_duration` in ms, and
 * logged with its endpoint, event and answer.
 */
export function createWebhookActivities(deps: WebhookActivityDeps) {
  return {
    /** One request; an HTTP failure is a result, not an activity failure (the workflow's timers pace retries). */
    async attemptWebhook(input: WebhookAttemptInput): Promise<WebhookAttemptResult> {
      const started = performance.now();
      const result = await attemptWebhook(deps, input, activityInfo().workflowExecution!.runId);
      metricMeter.createCounter('webhook_delivery_attempts', 'attempts', 'Webhook delivery attempts by outcome')
        .add(1, { outcome: result.outcome });
      if (result.outcome === 'delivered' || result.outcome === 'failed') {
        metricMeter.createHistogram('webhook_delivery_duration', 'int', 'ms', 'Webhook delivery attempts that made a request, from start to settled')
          .record(Math.round(performance.now() - started));
      }
      const fields = { tenantId: input.tenantId, endpointId: input.endpointId, eventId: input.envelope.id, eventType: input.envelope.type, attempt: input.attempt };
      if (result.outcome === 'failed') {
        deps.logger.warn({ ...fields, responseStatus: result.responseStatus, error: result.error, disabledNow: result.disabledNow }, 'webhook delivery attempt failed');
      } else {
        deps.logger.info({ ...fields, outcome: result.outcome }, 'webhook delivery attempt');
      }
      return result;
    },
    async deadLetterWebhook(input: WebhookDeadLetterInput): Promise<void> {
      await deadLetterWebhook(deps, input);
      metricMeter.createCounter('webhook_deliveries_dead_lettered', 'events', 'Webhook deliveries dead-lettered after their last attempt').add(1);
      deps.logger.warn({ tenantId: input.tenantId, endpointId: input.endpointId, eventId: input.envelope.id, attempts: input.attempts }, 'webhook delivery dead-lettered');
    },
    async webhookOwnerEmails(tenantId: string): Promise<string[]> {
      return webhookOwnerEmails(deps, tenantId);
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
