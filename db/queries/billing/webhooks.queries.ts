import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

export interface ReceivedWebhookEvent {
  provider: 'stripe' | 'paddle';
  eventId: string;
  eventType: string;
  tenantId: string;
}

/**
 * Records a provider event in the tenant's transaction (migration 0016). Answers false when the
 * provider already delivered this event id: it is a duplicate and is ignored.
 */
export async function insertWebhookEvent(tx: DatabaseTransactionConnection, event: ReceivedWebhookEvent): Promise<boolean> {
  const inserted = await tx.maybeOne(sql.type(z.object({ eventId: z.string() }))`
    INSERT INTO billing_webhook_events (provider, event_id, event_type, tenant_id)
    VALUES (${event.provider}, ${event.eventId}, ${event.eventType}, ${event.tenantId})
    ON CONFLICT (provider, event_id) DO NOTHING
    RETURNING event_id AS "eventId"
  `);
  return inserted !== null;
}
