import type { CommonQueryMethods } from 'slonik';
import { problems } from '../../../common/problems';
import { claimMfaStep, selectLoginMfa } from '../../../db/queries/identity/mfa.queries';
import type { IdentityDeps } from '../deps';
import { mfaKeys } from './mfa-keys';
import { openTotpSecret } from './secret-crypto';
import { matchTotp } from './totp';

export interface StoredTotp {
  /** The sealed secret (users.mfa_secret). */
  secret: Buffer;
  lastStep: number | null;
}

/**
 * Whether a code is good for the account now: it matches a step of the ±1 window later than the
 * last accepted one, and claiming that step succeeds (a concurrent request with the same code loses).
 */
export async function acceptTotpCode(
  deps: Pick<IdentityDeps, 'config'>, db: CommonQueryMethods, userId: string, stored: StoredTotp, code: string,
): Promise<boolean> {
  const secret = openTotpSecret(mfaKeys(deps.config.identity.mfa.encryptionKey).secretKey, userId, stored.secret);
  const step = await matchTotp(secret, code, stored.lastStep);
  return step !== null && claimMfaStep(db, userId, step);
}

/**
 * Login of an account with two-factor on, after its password was verified: no code is 401
 * mfa-required; a wrong or replayed code is 401 mfa-invalid and counts as a failed login in the
 * login throttle, so codes cannot be guessed faster than passwords.
 */
export async function assertLoginSecondFactor(
  deps: IdentityDeps, user: { id: string }, credentials: { email: string; mfaCode?: string }, ip: string,
): Promise<void> {
  if (credentials.mfaCode === undefined) throw problems.mfaRequired();
  const stored = await selectLoginMfa(deps.db, user.id);
  // Switched off since the account was read: nothing left to check.
  if (!stored) return;
  if (!await acceptTotpCode(deps, deps.db, user.id, stored, credentials.mfaCode)) {
    await deps.throttle.recordFailure(credentials.email, ip);
    throw problems.mfaInvalid();
  }
}
