import { z } from 'zod';
import type { Client } from '@temporalio/client';
import { newId } from '../../common/ids';
import { subscriptionTarget } from '../../services/billing/subscription-signal';
import type { Config } from '../../common/config';
import { sql, type DatabasePool } from '../../db/pool';
import type { webhookRedelivery } from '../../workflows/billing/webhook-redelivery.workflow';
import { stripeSignature } from './billing';
import { call, type JsonResponse } from './http';

/** Webhook delivery tests: signed Stripe events, the receipts as stored, a redelivery run on demand. */

export function stripeEvent(type: string, tenantId: string, object: Record<string, unknown> = {}): { id: string; body: string } {
  const id = `evt_${newId()}`;
  return { id, body: JSON.stringify({ id, object: 'event', type, data: { object: { object: 'invoice', metadata: { tenantId }, ...object } } }) };
}

export function postStripe(baseUrl: string, body: string): Promise<JsonResponse> {
  return call(`${baseUrl}/v1/billing/webhooks/stripe`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body) }, body,
  });
}

const receiptRow = z.object({
  eventType: z.string(),
  event: z.record(z.string(), z.unknown()).nullable(),
  traceId: z.string().nullable(),
  deliveredAt: z.string().nullable(),
});

/** A Stripe receipt as the owner role sees it. */
export function stripeReceipt(owner: DatabasePool, eventId: string) {
  return owner.maybeOne(sql.type(receiptRow)`
    SELECT event_type AS "eventType", event, trace_id AS "traceId", delivered_at AS "deliveredAt"
    FROM billing_webhook_events WHERE provider = 'stripe' AND event_id = ${eventId}
  `);
}

/** As if the delivery had never been acknowledged (the marker lost): the sweep delivers it again. */
export async function forgetDelivery(owner: DatabasePool, eventId: string): Promise<void> {
  await owner.query(sql.unsafe`UPDATE billing_webhook_events SET delivered_at = NULL WHERE provider = 'stripe' AND event_id = ${eventId}`);
}

/**
 * One run of the redelivery sweep as the Schedule starts it, on the test's worker, without the grace
 * period (every undelivered receipt is due). Answers how many receipts it delivered.
 */
export function runRedelivery(client: Client, taskQueue: string, cfg: Pick<Config, 'billing' | 'mail'>): Promise<number> {
  return client.workflow.execute<typeof webhookRedelivery>('webhookRedelivery', {
    workflowId: `billing.webhook-redelivery-test:${newId()}`,
    taskQueue,
    args: [{ graceSeconds: 0, batchSize: 500, maxBatches: 10, target: subscriptionTarget(cfg) }],
  });
}

/** The value of an unlabelled or labelled sample in a Prometheus text exposition, or undefined. */
export function metricValue(text: string, sample: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}
