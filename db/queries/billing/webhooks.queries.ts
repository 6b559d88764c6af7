import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

const eventIdRow = z.object({ eventId: z.string() });

/** The subscription workflow's providerEvent signal argument (workflows/billing/billing.messages.ts), as stored. */
const providerEvent = z.object({
  provider: z.enum(['stripe', 'paddle']),
  eventId: z.string(),
  kind: z.enum(['payment_succeeded', 'payment_failed', 'canceled', 'updated']),
  planId: z.string().optional(),
  periodEnd: z.string().optional(),
});
export type StoredProviderEvent = z.infer<typeof providerEvent>;

export interface ReceivedWebhookEvent {
  provider: 'stripe' | 'paddle';
  eventId: string;
  eventType: string;
  tenantId: string;
  /** What the subscription workflow's providerEvent signal carries; kept until it is delivered. */
  event: StoredProviderEvent;
  /** The receiving request's trace, so a late delivery's log lines can be tied to it. */
  traceId?: string;
}

/**
 * Records a provider event in the tenant's transaction, not yet delivered (migrations 0016, 0018).
 * Answers false when the provider already delivered this event id: it is a duplicate and is ignored.
 */
export async function insertWebhookEvent(tx: DatabaseTransactionConnection, event: ReceivedWebhookEvent): Promise<boolean> {
  const inserted = await tx.maybeOne(sql.type(eventIdRow)`
    INSERT INTO billing_webhook_events (provider, event_id, event_type, tenant_id, event, trace_id)
    VALUES (${event.provider}, ${event.eventId}, ${event.eventType}, ${event.tenantId},
            ${sql.jsonb({ ...event.event })}, ${event.traceId ?? null})
    ON CONFLICT (provider, event_id) DO NOTHING
    RETURNING event_id AS "eventId"
  `);
  return inserted !== null;
}

/**
 * Sets the delivery marker once the workflow acknowledged the signal: in the tenant's transaction
 * (the gateway) or as the owner role (the sweeper). A receipt delivered twice keeps its first time.
 */
export async function markWebhookEventDelivered(db: CommonQueryMethods, provider: string, eventId: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE billing_webhook_events SET delivered_at = now()
    WHERE provider = ${provider} AND event_id = ${eventId} AND delivered_at IS NULL
  `);
}

const undeliveredRow = z.object({
  provider: z.enum(['stripe', 'paddle']),
  eventId: z.string(),
  tenantId: z.string(),
  event: providerEvent,
  traceId: z.string().nullable(),
  receivedAt: z.string(),
  /** The tenant's subscription mirror: its status and since when (a late payment must not revive a cancellation). */
  subscriptionStatus: z.string().nullable(),
  statusChangedAt: z.string().nullable(),
});
export type UndeliveredWebhookEvent = z.infer<typeof undeliveredRow>;

/**
 * Receipts still undelivered that were received at least `graceSeconds` ago (younger ones are
 * still in the receiving gateway's hands), oldest first. Across tenants: the owner role only.
 */
export function selectUndeliveredWebhookEvents(
  owner: CommonQueryMethods, { graceSeconds, limit }: { graceSeconds: number; limit: number },
): Promise<readonly UndeliveredWebhookEvent[]> {
  return owner.any(sql.type(undeliveredRow)`
    SELECT e.provider, e.event_id AS "eventId", e.tenant_id AS "tenantId", e.event, e.trace_id AS "traceId", e.received_at AS "receivedAt",
           s.status AS "subscriptionStatus", s.status_changed_at AS "statusChangedAt"
    FROM billing_webhook_events e
    LEFT JOIN subscriptions s ON s.tenant_id = e.tenant_id
    WHERE e.delivered_at IS NULL AND e.received_at <= now() - make_interval(secs => ${graceSeconds})
    ORDER BY e.received_at
    LIMIT ${limit}
  `);
}

const backlogRow = z.object({ undelivered: z.number(), oldestAgeSeconds: z.number().nullable() });
export type WebhookDeliveryBacklog = z.infer<typeof backlogRow>;

/** How many receipts wait for delivery across tenants, and how long the oldest has (the gateway's /metrics). */
export function selectWebhookDeliveryBacklog(db: CommonQueryMethods): Promise<WebhookDeliveryBacklog> {
  return db.one(sql.type(backlogRow)`
    SELECT undelivered, extract(epoch FROM now() - oldest_received_at)::float8 AS "oldestAgeSeconds"
    FROM billing_webhook_delivery_backlog()
  `);
}
