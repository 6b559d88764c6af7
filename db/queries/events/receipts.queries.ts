import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * The de-duplication receipts of consumer groups (migration 0033). Statements run inside withTenant
 * and name the tenant as well (tenant scoping twice).
 */

/**
 * Records that `group` handled the event, in the caller's transaction (the one that carries the
 * handler's effect). False when the group had handled it already: the caller rolls its effect back
 * or skips it. `expiresAt` null keeps the receipt forever (financial events).
 */
export async function claimReceipt(
  tx: DatabaseTransactionConnection,
  receipt: { tenantId: string; group: string; eventId: string; expiresAt: string | null },
): Promise<boolean> {
  const claimed = await tx.maybeOne(sql.type(z.object({ eventId: z.string() }))`
    INSERT INTO event_receipts (tenant_id, consumer_group, event_id, expires_at)
    VALUES (${receipt.tenantId}, ${receipt.group}, ${receipt.eventId}, ${receipt.expiresAt})
    ON CONFLICT (tenant_id, consumer_group, event_id) DO NOTHING
    RETURNING event_id AS "eventId"
  `);
  return claimed !== null;
}

/** Whether `group` has a receipt for the event (a delivery that is not committed with an effect reads this first). */
export async function hasReceipt(
  tx: DatabaseTransactionConnection, tenantId: string, group: string, eventId: string,
): Promise<boolean> {
  return tx.exists(sql.unsafe`
    SELECT 1 FROM event_receipts
    WHERE tenant_id = ${tenantId} AND consumer_group = ${group} AND event_id = ${eventId}
  `);
}
