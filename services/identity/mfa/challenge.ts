import type { LoginMethod } from '../tokens';
import { problems, type Problem } from '../../../common/problems';
import { selectUserForLogin } from '../../../db/queries/identity/users.queries';
import type { IdentityDeps, TokenPair } from '../deps';
import { completeLogin, type TenantSelection } from '../login';
import { redeemRecoveryCode } from './recovery';
import { assertLoginSecondFactor } from './second-factor';

export interface MfaChallengeRequest {
  mfaToken: string;
  /** A current TOTP code, or instead: */
  mfaCode?: string;
  /** One of the account's recovery codes (used up). */
  recoveryCode?: string;
}

/**
 * The answer of a sign-in through an external provider for an account with two-factor on: 401
 * mfa-required as a password login answers it, plus a 5-minute token that stands for the proved
 * first factor, because the provider's callback (its state and code spent) cannot be repeated with a
 * code the way a password login can.
 */
export async function mfaChallenge(
  deps: Pick<IdentityDeps, 'tokens'>, user: { id: string; email: string }, how: LoginMethod,
): Promise<Problem> {
  const { token, expiresAt } = await deps.tokens.issueMfaChallengeToken(user, how);
  return problems.mfaChallenge(token, expiresAt.toISOString());
}

/**
 * POST /auth/mfa/challenge: completes such a sign-in with the second factor.
 * - mfaCode: checked exactly as at password login (replayed or wrong → 401 mfa-invalid, counted in
 *   the login throttle per account and IP, so the token does not allow faster guessing); then the
 *   sign-in ends like any other (token pair or tenant selection, method of the first factor).
 * - recoveryCode: the recovery of /auth/recovery with the challenge in place of the password: same
 *   lockout (5 wrong codes → 1-hour lock and owner alert, 15 → account locked), a token pair.
 * The token may be presented again within its 5 minutes (a mistyped code); a code works once.
 */
export async function completeMfaChallenge(
  deps: IdentityDeps, request: MfaChallengeRequest, ip: string,
): Promise<TokenPair | TenantSelection> {
  const { userId, how, email } = await deps.tokens.verifyMfaChallengeToken(request.mfaToken);
  const check = await deps.throttle.assertAllowed(email, ip);
  // Read again: the account may have changed in the minutes since the provider vouched for it.
  const user = await selectUserForLogin(deps.db, email);
  if (!user || user.id !== userId || user.deletedAt !== null) throw problems.unauthorized('The account cannot sign in');
  if (user.status === 'locked') throw problems.accountLocked();

  if (request.recoveryCode !== undefined) {
    const pair = await redeemRecoveryCode(deps, user, request.recoveryCode, ip);
    await deps.throttle.recordSuccess(email, check);
    return pair;
  }
  if (user.mfaEnabled) await assertLoginSecondFactor(deps, user, { email, mfaCode: request.mfaCode }, ip);
  await deps.throttle.recordSuccess(email, check);
  return completeLogin(deps, user, how);
}
