import { verifyPassword } from '../passwords';
import { problems, type Problem } from '../../../common/problems';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import { allowMfaReset } from '../../../db/queries/identity/mfa.queries';
import {
  clearRecoveryFailures, consumeRecoveryCode, countRecoveryCodes, lockAccount, lockRecoveryFailures, saveRecoveryFailures,
  type RecoveryFailures,
} from '../../../db/queries/identity/recovery.queries';
import { selectUserTenants } from '../../../db/queries/identity/tenants.queries';
import { selectUserForLogin, type LoginUser } from '../../../db/queries/identity/users.queries';
import { changeAccount } from '../account-changes';
import type { IdentityDeps, TokenPair } from '../deps';
import { authEvent } from '../events';
import { issuePair, publicPair } from '../sessions';
import { recordAccountAudit } from './audit';
import { mailRecoveryLockAlert, raiseRecoveryLockoutAlert, type RecoveryLockoutAlert } from './lockout-alert';
import { mfaKeys } from './mfa-keys';
import { hashRecoveryCode } from './recovery-code-crypto';
import { afterRecoveryFailure, lockSecondsLeft, type FailureState } from './recovery-lockout';

export interface RecoveryRequest {
  email: string;
  password: string;
  recoveryCode: string;
}

const toState = (row: RecoveryFailures): FailureState => ({
  windowStartedAt: Date.parse(row.windowStartedAt),
  windowFailures: row.windowFailures,
  totalFailures: row.totalFailures,
  lockedUntil: row.lockedUntil === null ? null : Date.parse(row.lockedUntil),
});

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * POST /auth/recovery: emergency login with the password and a recovery code, for a user who lost
 * the authenticator. The password is checked first, exactly as at login (same answers, same
 * throttle), so only someone who knows it can spend recovery attempts or learn about a lock: a
 * stranger cannot lock a victim's account. With the password right:
 * - a good code is used up and a token pair issued (the remembered tenant, else the first one);
 *   for the life of its access token /auth/mfa/disable accepts the password alone;
 * - a wrong code is 401 mfa-invalid and counts (recovery-lockout.ts); the failure that reaches the
 *   limit answers 429 (recovery locked for an hour, Retry-After) or 403 account-locked, and raises
 *   the alert, all committed together although the request fails; the owners' alert mail follows the commit.
 */
export async function recover(deps: IdentityDeps, request: RecoveryRequest, ip: string): Promise<TokenPair> {
  const check = await deps.throttle.assertAllowed(request.email, ip);
  const user = await selectUserForLogin(deps.db, request.email);
  const passwordOk = await verifyPassword(deps.config.identity.passwordPepper, user?.passwordHash, request.password);
  if (!user || !passwordOk || user.deletedAt !== null) {
    await deps.throttle.recordFailure(request.email, ip);
    throw problems.invalidCredentials();
  }
  if (user.status === 'locked') throw problems.accountLocked();
  const pair = await redeemRecoveryCode(deps, user, request.recoveryCode, ip);
  await deps.throttle.recordSuccess(request.email, check);
  return pair;
}

/**
 * The second half of a recovery, once the first factor is proven (the password here, or a provider
 * sign-in waiting for its second factor): the code is tried under the lockout rules in the
 * remembered tenant if it is still one of the user's, else the first. A lock's owner alert is mailed
 * after the transaction that records the lock has committed.
 */
export async function redeemRecoveryCode(
  deps: IdentityDeps, user: Pick<LoginUser, 'id' | 'email' | 'lastTenantId' | 'mfaEnabled'>, code: string, ip: string,
): Promise<TokenPair> {
  const tenants = await selectUserTenants(deps.db, user.id);
  if (tenants.length === 0) throw problems.forbidden('The account belongs to no tenant');
  const tenant = tenants.find((candidate) => candidate.id === user.lastTenantId) ?? tenants[0];

  const { result, alert } = await changeAccount(deps, tenant.id, user.id, (tx) => attempt(deps, tx, tenant.id, user, code, ip));
  if (alert?.kind === 'recovery-locked') await mailRecoveryLockAlert(deps, { ...alert, lockedUntil: alert.lockedUntil! });
  if (result instanceof Error) throw result;
  return result;
}

/** The answer of one attempt, and the alert its transaction raised (committed with it although the request fails). */
interface Attempt {
  result: TokenPair | Problem;
  alert?: RecoveryLockoutAlert;
}

async function attempt(
  deps: IdentityDeps, tx: DatabaseTransactionConnection, tenantId: string, user: Pick<LoginUser, 'id' | 'email' | 'mfaEnabled'>, code: string, ip: string,
): Promise<Attempt> {
  const row = await lockRecoveryFailures(tx, tenantId, user.id);
  // The tenant was picked from the account's own; a membership removed since is no way in.
  if (!row) return { result: problems.forbidden('The account is no longer a member of the tenant') };
  const now = Date.parse(row.now);
  const state = toState(row);
  const wait = lockSecondsLeft(state, now);
  if (wait > 0) return { result: problems.rateLimited(wait) };

  const hash = hashRecoveryCode(mfaKeys(deps.config.identity.mfa.encryptionKey).recoveryCodeKey, user.id, code);
  if (await consumeRecoveryCode(tx, tenantId, user.id, hash)) {
    await clearRecoveryFailures(tx, tenantId, user.id);
    await allowMfaReset(tx, user.id, deps.config.identity.ttl.accessToken);
    const pair = await issuePair(deps, tx, { userId: user.id, email: user.email, tenantId, mfa: user.mfaEnabled },
      authEvent('auth.user.logged_in', tenantId, user.id, { method: 'recovery_code', logged_in_at: new Date().toISOString() }));
    await recordAccountAudit(tx, {
      tenantId, userId: user.id, action: 'auth.recovery.used', ip, meta: { remainingCodes: await countRecoveryCodes(tx, tenantId, user.id) },
    });
    return { result: publicPair(pair) };
  }

  const { next, outcome } = afterRecoveryFailure(state, now, deps.config.identity.recovery);
  await saveRecoveryFailures(tx, tenantId, user.id, {
    windowStartedAt: iso(next.windowStartedAt)!, windowFailures: next.windowFailures, totalFailures: next.totalFailures, lockedUntil: iso(next.lockedUntil),
  });
  if (outcome === 'invalid') return { result: problems.mfaInvalid() };
  const base = { tenantId, userId: user.id, email: user.email, totalFailures: next.totalFailures, ip };
  if (outcome === 'account-locked') {
    await lockAccount(tx, tenantId, user.id);
    const alert: RecoveryLockoutAlert = { ...base, kind: 'account-locked' };
    await raiseRecoveryLockoutAlert(tx, deps.logger, alert);
    return { result: problems.accountLocked(), alert };
  }
  const alert: RecoveryLockoutAlert = { ...base, kind: 'recovery-locked', lockedUntil: iso(next.lockedUntil)! };
  await raiseRecoveryLockoutAlert(tx, deps.logger, alert);
  return { result: problems.rateLimited(lockSecondsLeft(next, now)), alert };
}
