import { proxyActivities } from '@temporalio/workflow';
import type { RedeliveryBatch, WebhookRedeliveryActivities } from '../../activities/billing/webhook-redelivery.activities';

const billing = proxyActivities<WebhookRedeliveryActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

export interface WebhookRedeliveryInput extends RedeliveryBatch {
  /** Batches per run at most; a larger backlog is taken by the next runs. */
  maxBatches: number;
}

/**
 * The safety net behind the gateway's delivery of webhook receipts (issue 5): the gateway answers a
 * provider once the receipt has committed and signals the subscription workflow afterwards; a receipt
 * it did not deliver (it stopped in between, Temporal was away) is delivered by this run, started
 * every BILLING_WEBHOOK_REDELIVERY_INTERVAL_SEC by the Schedule `billing.webhook-redelivery`.
 * Returns how many receipts it delivered.
 */
export async function webhookRedelivery({ maxBatches, ...batch }: WebhookRedeliveryInput): Promise<number> {
  let delivered = 0;
  for (let run = 0; run < maxBatches; run += 1) {
    const result = await billing.redeliverWebhookEvents(batch);
    delivered += result.delivered;
    if (!result.more) break;
  }
  return delivered;
}
