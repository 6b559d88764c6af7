import { Context } from '@temporalio/activity';
import { signalProviderEvent, type SubscriptionTarget } from '../../common/billing/subscription-signal';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import { markWebhookEventDelivered, selectUndeliveredWebhookEvents } from '../../db/queries/billing/webhooks.queries';

export interface WebhookRedeliveryDeps {
  /** The owner role: the sweep covers every tenant's receipts. */
  ownerPool: DatabasePool;
  logger: Logger;
}

export interface RedeliveryBatch {
  /** Receipts received at least this long ago; younger ones are still with the gateway that received them. */
  graceSeconds: number;
  batchSize: number;
  /** Where the subscription workflows run and what a signal starts them with (from the worker's configuration). */
  target: SubscriptionTarget;
}

export interface RedeliveryResult {
  delivered: number;
  /** The batch was full: more receipts may be waiting. */
  more: boolean;
}

export function createWebhookRedeliveryActivities({ ownerPool, logger }: WebhookRedeliveryDeps) {
  return {
    /**
     * Delivers the oldest undelivered webhook receipts to their subscription workflows through the
     * worker's own client (payloads encrypted like every other), marking each once acknowledged. A
     * signal that fails fails the activity (Temporal is away: the rest of the batch would fail too);
     * what was delivered before it stays marked, and the retry or the next run takes the rest. A
     * receipt the gateway delivered meanwhile is delivered once more, which the workflow ignores.
     */
    async redeliverWebhookEvents({ graceSeconds, batchSize, target }: RedeliveryBatch): Promise<RedeliveryResult> {
      const { client } = Context.current();
      const receipts = await selectUndeliveredWebhookEvents(ownerPool, { graceSeconds, limit: batchSize });
      for (const [done, receipt] of receipts.entries()) {
        await signalProviderEvent(client, target, receipt.tenantId, receipt.event);
        await markWebhookEventDelivered(ownerPool, receipt.provider, receipt.eventId);
        // The receiving request's trace, so the late delivery is found beside the request it answered.
        logger.info({
          ...(receipt.traceId ? { traceId: receipt.traceId } : {}), tenantId: receipt.tenantId, provider: receipt.provider, eventId: receipt.eventId,
          lagSeconds: (Date.now() - Date.parse(receipt.receivedAt)) / 1000,
        }, 'webhook redelivered to the subscription workflow');
        Context.current().heartbeat(done + 1);
      }
      return { delivered: receipts.length, more: receipts.length === batchSize };
    },
  };
}

export type WebhookRedeliveryActivities = ReturnType<typeof createWebhookRedeliveryActivities>;
