import { z } from 'zod';
import { newId } from '../../../common/ids';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/** The account's recovery codes become exactly these (hashed) ones; any earlier code stops working. */
export async function replaceRecoveryCodes(tx: DatabaseTransactionConnection, userId: string, hashes: Buffer[]): Promise<void> {
  await tx.query(sql.unsafe`DELETE FROM recovery_codes WHERE user_id = ${userId}`);
  const rows = hashes.map((hash) => sql.fragment`(${newId()}, ${userId}, ${sql.binary(hash)})`);
  await tx.query(sql.unsafe`
    INSERT INTO recovery_codes (id, user_id, code_hash) VALUES ${sql.join(rows, sql.fragment`, `)}
  `);
}

const count = z.object({ remaining: z.number() });

export async function countRecoveryCodes(tx: DatabaseTransactionConnection, userId: string): Promise<number> {
  const row = await tx.one(sql.type(count)`SELECT count(*) AS remaining FROM recovery_codes WHERE user_id = ${userId}`);
  return row.remaining;
}

/** Uses a code up: true when it existed. Deleting it is what makes it single-use. */
export async function consumeRecoveryCode(tx: DatabaseTransactionConnection, userId: string, hash: Buffer): Promise<boolean> {
  const result = await tx.query(sql.unsafe`
    DELETE FROM recovery_codes WHERE user_id = ${userId} AND code_hash = ${sql.binary(hash)}
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
 * concurrent recovery attempts of one account are counted one after the other.
 */
export async function lockRecoveryFailures(tx: DatabaseTransactionConnection, userId: string): Promise<RecoveryFailures> {
  await tx.query(sql.unsafe`INSERT INTO recovery_failures (user_id) VALUES (${userId}) ON CONFLICT (user_id) DO NOTHING`);
  return tx.one(sql.type(failures)`
    SELECT window_started_at AS "windowStartedAt", window_failures AS "windowFailures",
           total_failures AS "totalFailures", locked_until AS "lockedUntil", now()
    FROM recovery_failures WHERE user_id = ${userId}
    FOR UPDATE
  `);
}

export async function saveRecoveryFailures(
  tx: DatabaseTransactionConnection, userId: string, state: Omit<RecoveryFailures, 'now'>,
): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE recovery_failures
    SET window_started_at = ${state.windowStartedAt}, window_failures = ${state.windowFailures},
        total_failures = ${state.totalFailures}, locked_until = ${state.lockedUntil}, updated_at = now()
    WHERE user_id = ${userId}
  `);
}

/** A successful recovery starts the count afresh. */
export async function clearRecoveryFailures(tx: DatabaseTransactionConnection, userId: string): Promise<void> {
  await tx.query(sql.unsafe`DELETE FROM recovery_failures WHERE user_id = ${userId}`);
}

/** Document 1, User states: 15 failed recovery attempts lock the account (login and recovery refused). */
export async function lockAccount(tx: DatabaseTransactionConnection, userId: string): Promise<void> {
  await tx.query(sql.unsafe`UPDATE users SET status = 'locked', updated_at = now() WHERE id = ${userId}`);
}
