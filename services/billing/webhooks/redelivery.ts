import type { Client } from '@temporalio/client';
import { signalProviderEvent, type SubscriptionTarget } from '../subscription-signal';
import type { Logger } from '../../../common/logger';
import type { Progress } from '../../../common/progress';
import type { DatabasePool } from '../../../db/pool';
import {
  markWebhookEventDelivered, selectUndeliveredWebhookEvents, type UndeliveredWebhookEvent,
} from '../../../db/queries/billing/webhooks.queries';

export interface WebhookRedeliveryDeps {
  /** The owner role: the sweep covers every tenant's receipts (a fleet-wide Schedule). */
  fleetPool: DatabasePool;
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

/**
 * Delivers the oldest undelivered webhook receipts to their subscription workflows through `client`
 * (the worker's own, payloads encrypted like every other), marking each once acknowledged and
 * reporting how many are done. A signal that fails fails the call (Temporal is away: the rest of
 * the batch would fail too); what was delivered before it stays marked, and the retry or the next
 * run takes the rest. A receipt the gateway delivered meanwhile is delivered once more, which the
 * workflow ignores.
 */
export async function redeliverWebhookEvents(
  { fleetPool, logger }: WebhookRedeliveryDeps, client: Client, { graceSeconds, batchSize, target }: RedeliveryBatch, progress: Progress,
): Promise<RedeliveryResult> {
  const receipts = await selectUndeliveredWebhookEvents(fleetPool, { graceSeconds, limit: batchSize });
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
    await markWebhookEventDelivered(fleetPool, receipt.provider, receipt.eventId);
    progress(done + 1);
  }
  return { delivered: receipts.length - superseded, superseded, more: receipts.length === batchSize };
}
