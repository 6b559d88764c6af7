import { Context } from '@temporalio/activity';
import { signalProviderEvent, type SubscriptionTarget } from '../../services/billing/subscription-signal';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import {
  markWebhookEventDelivered, selectUndeliveredWebhookEvents, type UndeliveredWebhookEvent,
} from '../../db/queries/billing/webhooks.queries';

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
  /** Late payments received before the subscription was canceled: marked, not signalled. */
  superseded: number;
  /** The batch was full: more receipts may be waiting. */
  more: boolean;
}

/**
 * A payment received before the subscription was canceled, delivered only now: applied in its order it
 * would have come before the cancellation, which stands. Signalled, it would start a new run (the
 * canceled run has ended, and with it the event ids it had applied) and reactivate the subscription,
 * also when it is a second delivery of a payment that was applied before the cancellation.
 */
function supersededByCancellation(receipt: UndeliveredWebhookEvent): boolean {
  return receipt.event.kind === 'payment_succeeded' && receipt.subscriptionStatus === 'canceled'
    && receipt.statusChangedAt !== null && Date.parse(receipt.statusChangedAt) > Date.parse(receipt.receivedAt);
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
      let superseded = 0;
      for (const [done, receipt] of receipts.entries()) {
        // The receiving request's trace, so the late delivery is found beside the request it answered.
        const fields = {
          ...(receipt.traceId ? { traceId: receipt.traceId } : {}), tenantId: receipt.tenantId, provider: receipt.provider, eventId: receipt.eventId,
          lagSeconds: (Date.now() - Date.parse(receipt.receivedAt)) / 1000,
        };
        if (supersededByCancellation(receipt)) {
          superseded += 1;
          logger.warn(fields, 'late webhook payment not delivered: the subscription was canceled after it was received');
        } else {
          await signalProviderEvent(client, target, receipt.tenantId, receipt.event);
          logger.info(fields, 'webhook redelivered to the subscription workflow');
        }
        await markWebhookEventDelivered(ownerPool, receipt.provider, receipt.eventId);
        Context.current().heartbeat(done + 1);
      }
      return { delivered: receipts.length - superseded, superseded, more: receipts.length === batchSize };
    },
  };
}

export type WebhookRedeliveryActivities = ReturnType<typeof createWebhookRedeliveryActivities>;
