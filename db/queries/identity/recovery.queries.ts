import { z } from 'zod';
import { newId } from '../../../common/ids';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * Recovery codes and the recovery failure count belong to the global account, not to a tenant
 * (migration 0005): recovery_codes and recovery_failures have no tenant_id, one set of codes serves
 * every tenant of the account, and 15 failures lock the account everywhere (docs/reference/identity.md#rule-22).
 * Every caller works in one tenant's transaction (the caller's own, or the tenant a
 * recovery signs in to), so each statement names that tenant and reaches the account only through
 * its membership there (memberOf), as row-level security checks again (member_access).
 */
const memberOf = (tenantId: string, userId: string) =>
  sql.fragment`EXISTS (SELECT 1 FROM memberships m WHERE m.tenant_id = ${tenantId} AND m.user_id = ${userId})`;

/** The account's recovery codes become exactly these (hashed) ones; any earlier code stops working. */
export async function replaceRecoveryCodes(
  tx: DatabaseTransactionConnection, tenantId: string, userId: string, hashes: Buffer[],
): Promise<void> {
  await tx.query(sql.unsafe`DELETE FROM recovery_codes WHERE user_id = ${userId} AND ${memberOf(tenantId, userId)}`);
  const rows = hashes.map((hash) => sql.fragment`(${newId()}::uuid, ${userId}::uuid, ${sql.binary(hash)}::bytea)`);
  await tx.query(sql.unsafe`
    INSERT INTO recovery_codes (id, user_id, code_hash)
    SELECT * FROM (VALUES ${sql.join(rows, sql.fragment`, `)}) AS code (id, user_id, code_hash)
    WHERE ${memberOf(tenantId, userId)}
  `);
}

const count = z.object({ remaining: z.number() });

export async function countRecoveryCodes(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<number> {
  const row = await tx.one(sql.type(count)`
    SELECT count(*) AS remaining FROM recovery_codes WHERE user_id = ${userId} AND ${memberOf(tenantId, userId)}
  `);
  return row.remaining;
}

/** Uses a code up: true when it existed. Deleting it is what makes it single-use. */
export async function consumeRecoveryCode(tx: DatabaseTransactionConnection, tenantId: string, userId: string, hash: Buffer): Promise<boolean> {
  const result = await tx.query(sql.unsafe`
    DELETE FROM recovery_codes WHERE user_id = ${userId} AND code_hash = ${sql.binary(hash)} AND ${memberOf(tenantId, userId)}
  `);
  return result.rowCount === 1;
}

const failures = z.object({
  windowStartedAt: z.string(),
  windowFailures: z.number(),
  totalFailures: z.number(),
  lockedUntil: z.string().nullable(),
  /** The database clock, so every time comparison uses one clock. */
  now: z.string(),
});
export type RecoveryFailures = z.infer<typeof failures>;

/**
 * The account's failure record, created when missing and locked for the rest of the transaction, so
 * concurrent recovery attempts of one account are counted one after the other. Null when the
 * account is no member of the tenant (nothing is created or locked then).
 */
export async function lockRecoveryFailures(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<RecoveryFailures | null> {
  await tx.query(sql.unsafe`
    INSERT INTO recovery_failures (user_id) SELECT ${userId}::uuid WHERE ${memberOf(tenantId, userId)} ON CONFLICT (user_id) DO NOTHING
  `);
  return tx.maybeOne(sql.type(failures)`
    SELECT window_started_at AS "windowStartedAt", window_failures AS "windowFailures",
           total_failures AS "totalFailures", locked_until AS "lockedUntil", now()
    FROM recovery_failures WHERE user_id = ${userId} AND ${memberOf(tenantId, userId)}
    FOR UPDATE
  `);
}

export async function saveRecoveryFailures(
  tx: DatabaseTransactionConnection, tenantId: string, userId: string, state: Omit<RecoveryFailures, 'now'>,
): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE recovery_failures
    SET window_started_at = ${state.windowStartedAt}, window_failures = ${state.windowFailures},
        total_failures = ${state.totalFailures}, locked_until = ${state.lockedUntil}, updated_at = now()
    WHERE user_id = ${userId} AND ${memberOf(tenantId, userId)}
  `);
}

/** A successful recovery starts the count afresh. */
export async function clearRecoveryFailures(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<void> {
  await tx.query(sql.unsafe`DELETE FROM recovery_failures WHERE user_id = ${userId} AND ${memberOf(tenantId, userId)}`);
}

/** docs/reference/identity.md#rule-22: 15 failed recovery attempts lock the account (login and recovery refused), in every tenant. */
export async function lockAccount(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<void> {
  await tx.query(sql.unsafe`UPDATE users SET status = 'locked', updated_at = now() WHERE id = ${userId} AND ${memberOf(tenantId, userId)}`);
}
