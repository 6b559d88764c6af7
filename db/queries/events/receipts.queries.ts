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

/**
 * Of `eventIds`, those `group` has a receipt for and those it has a dead letter of, in one statement:
 * what a batch of forwarded deliveries (whose receipt is not committed with an effect) reads first.
 */
export async function receiptsAndDeadLettersOf(
  tx: DatabaseTransactionConnection, tenantId: string, group: string, eventIds: readonly string[],
): Promise<{ receipts: Set<string>; deadLetters: Set<string> }> {
  const ids = sql.array(eventIds, 'uuid');
  const rows = await tx.any(sql.type(z.object({ eventId: z.string(), deadLetter: z.boolean() }))`
    SELECT event_id AS "eventId", false AS "deadLetter" FROM event_receipts
    WHERE tenant_id = ${tenantId} AND consumer_group = ${group} AND event_id = ANY(${ids})
    UNION ALL
    SELECT event_id, true FROM event_dead_letters
    WHERE tenant_id = ${tenantId} AND consumer_group = ${group} AND event_id = ANY(${ids})
  `);
  const of = (deadLetter: boolean) => new Set(rows.filter((row) => row.deadLetter === deadLetter).map((row) => row.eventId));
  return { receipts: of(false), deadLetters: of(true) };
}

/** Records that `group` forwarded the events, in one statement; receipts another member claimed meanwhile stay as they are. */
export async function claimReceipts(
  tx: DatabaseTransactionConnection, tenantId: string, group: string,
  receipts: ReadonlyArray<{ eventId: string; expiresAt: string | null }>,
): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO event_receipts (tenant_id, consumer_group, event_id, expires_at)
    SELECT ${tenantId}, ${group}, event_id, expires_at
    FROM unnest(${sql.array(receipts.map((r) => r.eventId), 'uuid')}, ${sql.array(receipts.map((r) => r.expiresAt), 'timestamptz')}) AS r (event_id, expires_at)
    ON CONFLICT (tenant_id, consumer_group, event_id) DO NOTHING
  `);
}
