import { Context } from '@temporalio/activity';
import {
  redeliverWebhookEvents, type RedeliveryBatch, type RedeliveryResult, type WebhookRedeliveryDeps,
} from '../../services/billing/webhooks/redelivery';

export type { RedeliveryBatch, RedeliveryResult };

/** The webhook redelivery Schedule's activity: services/billing/webhooks/redelivery.ts, signalling through the worker's client. */
export function createWebhookRedeliveryActivities(deps: WebhookRedeliveryDeps) {
  return {
    async redeliverWebhookEvents(batch: RedeliveryBatch): Promise<RedeliveryResult> {
      const context = Context.current();
      return redeliverWebhookEvents(deps, context.client, batch, (done) => context.heartbeat(done));
    },
  };
}

export type WebhookRedeliveryActivities = ReturnType<typeof createWebhookRedeliveryActivities>;
