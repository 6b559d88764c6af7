import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import type { StatementRows } from '../../tenant-reads';

/**
 * The de-duplication receipts of consumer groups (migration 0033). Statements run inside withTenant,
 * or enter the tenant themselves (migration 0034), and name the tenant as well (tenant scoping twice).
 */

const eventIdRow = z.object({ eventId: z.string() });

/**
 * Records that `group` handled the event, in the caller's transaction (the one that carries the
 * handler's effect). False when the group had handled it already: the caller rolls its effect back
 * or skips it. `expiresAt` null keeps the receipt forever (financial events).
 */
export async function claimReceipt(
  tx: DatabaseTransactionConnection,
  receipt: { tenantId: string; group: string; eventId: string; expiresAt: string | null },
): Promise<boolean> {
  const claimed = await tx.maybeOne(sql.type(eventIdRow)`
    INSERT INTO event_receipts (tenant_id, consumer_group, event_id, expires_at)
    VALUES (${receipt.tenantId}, ${receipt.group}, ${receipt.eventId}, ${receipt.expiresAt})
    ON CONFLICT (tenant_id, consumer_group, event_id) DO NOTHING
    RETURNING event_id AS "eventId"
  `);
  return claimed !== null;
}

const knownRow = z.object({ eventId: z.string(), deadLetter: z.boolean() });
const resolvedRow = z.object({ eventId: z.string() });

/**
 * Of `eventIds`, those `group` has a receipt for and those it has a dead letter of: what a batch of
 * forwarded deliveries (whose receipt is not committed with an effect) reads first. One statement,
 * not a withTenant transaction: events_forwarded_known (migration 0034) enters the tenant itself,
 * for that statement only, and names it as well.
 */
export async function forwardedKnownOf(
  statementRows: StatementRows, tenantId: string, group: string, eventIds: readonly string[],
): Promise<{ receipts: Set<string>; deadLetters: Set<string> }> {
  const rows = await statementRows(sql.type(knownRow)`
    SELECT event_id AS "eventId", dead_letter AS "deadLetter"
    FROM events_forwarded_known(${tenantId}, ${group}, ${sql.array(eventIds, 'uuid')})
  `) as ReadonlyArray<z.infer<typeof knownRow>>;
  const of = (deadLetter: boolean) => new Set(rows.filter((row) => row.deadLetter === deadLetter).map((row) => row.eventId));
  return { receipts: of(false), deadLetters: of(true) };
}

/**
 * Records that `group` forwarded the events (receipts another member claimed meanwhile stay as they
 * are) and resolves the dead letters of the redeliveries among them, together, in one statement
 * (events_forwarded_settle, migration 0034, entering the tenant as forwardedKnownOf does). Returns
 * the redelivered events whose dead letter it resolved.
 */
export async function settleForwarded(
  statementRows: StatementRows, tenantId: string, group: string,
  receipts: ReadonlyArray<{ eventId: string; expiresAt: string | null }>, redelivered: readonly string[],
): Promise<Set<string>> {
  const resolved = await statementRows(sql.type(resolvedRow)`
    SELECT resolved AS "eventId" FROM events_forwarded_settle(
      ${tenantId}, ${group}, ${sql.array(receipts.map((r) => r.eventId), 'uuid')},
      ${sql.array(receipts.map((r) => r.expiresAt), 'timestamptz')}, ${sql.array(redelivered, 'uuid')}
    ) AS resolved
  `) as ReadonlyArray<z.infer<typeof resolvedRow>>;
  return new Set(resolved.map((row) => row.eventId));
}
