import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

const mfaState = z.object({
  email: z.string(),
  passwordHash: z.string().nullable(),
  mfaEnabled: z.boolean(),
  /** The sealed TOTP secret: pending while mfaEnabled is false. */
  secret: z.instanceof(Buffer).nullable(),
  lastStep: z.number().nullable(),
  /** A recovery within the reset window lets /auth/mfa/disable go without a code. */
  resetAllowed: z.boolean(),
});
export type MfaState = z.infer<typeof mfaState>;

/**
 * The caller's two-factor state as a member of the transaction's tenant, its row locked so enable,
 * verify and disable of one account run one after the other.
 */
export function lockMfaState(tx: DatabaseTransactionConnection, userId: string): Promise<MfaState | null> {
  return tx.maybeOne(sql.type(mfaState)`
    SELECT email, password_hash AS "passwordHash", mfa_enabled AS "mfaEnabled", mfa_secret AS secret,
           mfa_last_step AS "lastStep", coalesce(mfa_reset_until > now(), false) AS "resetAllowed"
    FROM users WHERE id = ${userId}
    FOR UPDATE
  `);
}

/** A new pending secret; the step counter starts afresh with it. */
export async function storePendingSecret(tx: DatabaseTransactionConnection, userId: string, sealed: Buffer): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE users SET mfa_secret = ${sql.binary(sealed)}, mfa_enabled = false, mfa_last_step = NULL, updated_at = now()
    WHERE id = ${userId}
  `);
}

export async function activateMfa(tx: DatabaseTransactionConnection, userId: string): Promise<void> {
  await tx.query(sql.unsafe`UPDATE users SET mfa_enabled = true, updated_at = now() WHERE id = ${userId}`);
}

/** Two-factor off: the secret is dropped, and with it any reset window a recovery opened. */
export async function deactivateMfa(tx: DatabaseTransactionConnection, userId: string): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE users SET mfa_enabled = false, mfa_secret = NULL, mfa_last_step = NULL, mfa_reset_until = NULL, updated_at = now()
    WHERE id = ${userId}
  `);
}

/** After a successful recovery: two-factor may be switched off with the password alone until then. */
export async function allowMfaReset(tx: DatabaseTransactionConnection, userId: string, seconds: number): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE users SET mfa_reset_until = now() + make_interval(secs => ${seconds}) WHERE id = ${userId}
  `);
}

const loginMfa = z.object({ secret: z.instanceof(Buffer), lastStep: z.number().nullable() });
export type LoginMfa = z.infer<typeof loginMfa>;

/**
 * Login, before a tenant is known: the sealed secret of an account with two-factor on, through the
 * SECURITY DEFINER function auth_user_mfa of migration 0005.
 */
export function selectLoginMfa(db: CommonQueryMethods, userId: string): Promise<LoginMfa | null> {
  return db.maybeOne(sql.type(loginMfa)`
    SELECT secret, last_step AS "lastStep" FROM auth_user_mfa(${userId})
  `);
}

const claimed = z.object({ claimed: z.boolean() });

/**
 * Records the step of an accepted code (auth_mfa_claim_step, migration 0005). False when that step or
 * a later one was already accepted: the code is a replay, possibly a concurrent one.
 */
export async function claimMfaStep(db: CommonQueryMethods, userId: string, step: number): Promise<boolean> {
  const row = await db.one(sql.type(claimed)`SELECT auth_mfa_claim_step(${userId}, ${step}) AS claimed`);
  return row.claimed;
}
