import { verifyPassword } from '../../../common/identity/passwords';
import { problems, type Problem } from '../../../common/problems';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import { allowMfaReset } from '../../../db/queries/identity/mfa.queries';
import {
  clearRecoveryFailures, consumeRecoveryCode, countRecoveryCodes, lockAccount, lockRecoveryFailures, saveRecoveryFailures,
  type RecoveryFailures,
} from '../../../db/queries/identity/recovery.queries';
import { selectUserTenants } from '../../../db/queries/identity/tenants.queries';
import { selectUserForLogin, type LoginUser } from '../../../db/queries/identity/users.queries';
import type { IdentityDeps, TokenPair } from '../deps';
import { enqueueAuthEvent } from '../events';
import { issuePair, publicPair } from '../sessions';
import { recordAccountAudit } from './audit';
import { raiseRecoveryLockoutAlert } from './lockout-alert';
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
 *   the alert, all committed together although the request fails.
 */
export async function recover(deps: IdentityDeps, request: RecoveryRequest, ip: string): Promise<TokenPair> {
  await deps.throttle.assertAllowed(request.email, ip);
  const user = await selectUserForLogin(deps.db, request.email);
  const passwordOk = await verifyPassword(user?.passwordHash, request.password);
  if (!user || !passwordOk || user.deletedAt !== null) {
    await deps.throttle.recordFailure(request.email, ip);
    throw problems.invalidCredentials();
  }
  if (user.status === 'locked') throw problems.accountLocked();

  const tenants = await selectUserTenants(deps.db, user.id);
  if (tenants.length === 0) throw problems.forbidden('The account belongs to no tenant');
  const tenant = tenants.find((candidate) => candidate.id === user.lastTenantId) ?? tenants[0];

  const outcome = await withTenant(deps.db, tenant.id, (tx) => attempt(deps, tx, tenant.id, user, request.recoveryCode, ip));
  if (outcome instanceof Error) throw outcome;
  await deps.throttle.recordSuccess(request.email);
  return outcome;
}

async function attempt(
  deps: IdentityDeps, tx: DatabaseTransactionConnection, tenantId: string, user: LoginUser, code: string, ip: string,
): Promise<TokenPair | Problem> {
  const row = await lockRecoveryFailures(tx, user.id);
  const now = Date.parse(row.now);
  const state = toState(row);
  const wait = lockSecondsLeft(state, now);
  if (wait > 0) return problems.rateLimited(wait);

  const hash = hashRecoveryCode(mfaKeys(deps.config.identity.mfa.encryptionKey).recoveryCodeKey, user.id, code);
  if (await consumeRecoveryCode(tx, user.id, hash)) {
    await clearRecoveryFailures(tx, user.id);
    await allowMfaReset(tx, user.id, deps.config.identity.ttl.accessToken);
    const pair = await issuePair(deps, tx, { userId: user.id, email: user.email, tenantId });
    await enqueueAuthEvent(tx, 'auth.user.logged_in', tenantId, user.id, { method: 'recovery_code', logged_in_at: new Date().toISOString() });
    await recordAccountAudit(tx, {
      tenantId, userId: user.id, action: 'auth.recovery.used', ip, meta: { remainingCodes: await countRecoveryCodes(tx, user.id) },
    });
    return publicPair(pair);
  }

  const { next, outcome } = afterRecoveryFailure(state, now, deps.config.identity.recovery);
  await saveRecoveryFailures(tx, user.id, {
    windowStartedAt: iso(next.windowStartedAt)!, windowFailures: next.windowFailures, totalFailures: next.totalFailures, lockedUntil: iso(next.lockedUntil),
  });
  if (outcome === 'invalid') return problems.mfaInvalid();
  const alert = { tenantId, userId: user.id, email: user.email, totalFailures: next.totalFailures, ip };
  if (outcome === 'account-locked') {
    await lockAccount(tx, user.id);
    await raiseRecoveryLockoutAlert(tx, deps.logger, { ...alert, kind: 'account-locked' });
    return problems.accountLocked();
  }
  await raiseRecoveryLockoutAlert(tx, deps.logger, { ...alert, kind: 'recovery-locked', lockedUntil: iso(next.lockedUntil)! });
  return problems.rateLimited(lockSecondsLeft(next, now));
}
