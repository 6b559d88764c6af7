import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * Anonymization (migration 0008): the per-user lock, the records an anonymization concerns, and the
 * row that makes audit_records_readable mask them. All under withTenant (row-level security).
 */

const tokenRow = z.object({ token: z.string() });
const liveRow = z.object({ live: z.boolean() });
const foundRow = z.object({ found: z.boolean() });
const nRow = z.object({ n: z.number() });
const nowRow = z.object({ now: z.string() });
const anonymizedUserRow = z.object({ userId: z.string(), maskedUntilMs: z.number() });

/**
 * Takes the lock of one user unless a live one exists: a new row, or an expired row taken over.
 * True when this caller holds it now. A concurrent insert of the same key waits for the other
 * transaction and then sees its live row, so exactly one of two racing callers wins.
 */
export async function acquireAnonymizationLock(
  tx: DatabaseTransactionConnection, tenantId: string, userId: string, token: string, ttlSeconds: number,
): Promise<boolean> {
  const taken = await tx.maybeOne(sql.type(tokenRow)`
    INSERT INTO audit_anonymization_locks (tenant_id, user_id, token, expires_at)
    VALUES (${tenantId}, ${userId}, ${token}, clock_timestamp() + make_interval(secs => ${ttlSeconds}))
    ON CONFLICT (tenant_id, user_id) DO UPDATE SET token = EXCLUDED.token, expires_at = EXCLUDED.expires_at
      WHERE audit_anonymization_locks.expires_at <= clock_timestamp()
    RETURNING token
  `);
  return taken !== null;
}

/** Releases the lock if this token still holds it (an expired lock may have been taken over). */
export async function releaseAnonymizationLock(
  tx: DatabaseTransactionConnection, tenantId: string, userId: string, token: string,
): Promise<void> {
  await tx.query(sql.unsafe`
    DELETE FROM audit_anonymization_locks WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND token = ${token}
  `);
}

/** Whether any anonymization of the tenant holds a live lock. Read-only: works on the reporting pool. */
export function hasLiveAnonymizationLock(db: CommonQueryMethods, tenantId: string): Promise<boolean> {
  return db.oneFirst(sql.type(liveRow)`
    SELECT EXISTS (
      SELECT 1 FROM audit_anonymization_locks WHERE tenant_id = ${tenantId} AND expires_at > clock_timestamp()
    ) AS live
  `);
}

/**
 * The records of the tenant that concern a user, in the sense of the view's masking rule: the user
 * is their actor or impersonator, or their entity is the user. The raw table, not the view: the
 * question is what the store holds.
 */
const concerning = (tenantId: string, userId: string) => sql.fragment`
  tenant_id = ${tenantId}
  AND (actor_id = ${userId} OR impersonator_id = ${userId} OR (entity_type = 'user' AND entity_id = ${userId}))
`;

/** Whether any money.* record concerns the user: financial records are never anonymized (docs/reference/audit.md#rule-14). */
export function hasFinancialRecords(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<boolean> {
  return tx.oneFirst(sql.type(foundRow)`
    SELECT EXISTS (
      SELECT 1 FROM audit_records WHERE ${concerning(tenantId, userId)} AND action COLLATE "C" LIKE 'money.%'
    ) AS found
  `);
}

/**
 * How many stored records an anonymization up to `until` masks that an earlier one had not:
 * records concerning the user after the previous masked_until (if any), up to `until`. The
 * anonymization records themselves are not counted (their meta is never masked).
 */
export function countRecordsToMask(
  tx: DatabaseTransactionConnection, tenantId: string, userId: string, until: string,
): Promise<number> {
  return tx.oneFirst(sql.type(nRow)`
    SELECT count(*)::int AS n
    FROM audit_records
    WHERE ${concerning(tenantId, userId)}
      AND action <> 'audit.record.anonymized'
      AND occurred_at <= ${until}::timestamptz
      AND occurred_at > coalesce(
        (SELECT masked_until FROM audit_anonymized_users WHERE tenant_id = ${tenantId} AND user_id = ${userId}),
        '-infinity'::timestamptz)
  `);
}

/** The transaction's time, which the anonymization covers up to (and reports as completedAt). */
export function transactionTime(tx: DatabaseTransactionConnection): Promise<string> {
  return tx.oneFirst(sql.type(nowRow)`SELECT now() AS now`);
}

/** Masks the user's records up to `until` from now on (a later anonymization only moves it forward). */
export async function upsertAnonymizedUser(
  tx: DatabaseTransactionConnection, tenantId: string, userId: string, until: string, anonymizationId: string,
): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO audit_anonymized_users (tenant_id, user_id, masked_until, last_anonymization_id)
    VALUES (${tenantId}, ${userId}, ${until}::timestamptz, ${anonymizationId})
    ON CONFLICT (tenant_id, user_id) DO UPDATE
      SET masked_until = GREATEST(audit_anonymized_users.masked_until, EXCLUDED.masked_until),
          last_anonymization_id = EXCLUDED.last_anonymization_id
  `);
}

/**
 * Every anonymized user of the tenant with masked_until in epoch milliseconds (floored: records carry
 * millisecond timestamps, so `timestamp <= floor` is exactly the view's `occurred_at <= masked_until`).
 * For records the view cannot mask, those restored from the cold archive (services/audit/anonymization-mask.ts).
 */
export async function selectAnonymizedUsers(db: CommonQueryMethods, tenantId: string): Promise<Map<string, number>> {
  const rows = await db.any(sql.type(anonymizedUserRow)`
    SELECT user_id AS "userId", floor(extract(epoch FROM masked_until) * 1000)::int8 AS "maskedUntilMs"
    FROM audit_anonymized_users WHERE tenant_id = ${tenantId}
  `);
  return new Map(rows.map((row) => [row.userId, row.maskedUntilMs]));
}
