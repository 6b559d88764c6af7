import type { CommonQueryMethods } from 'slonik';
import { problems } from '../../../common/problems';
import { claimMfaStep, selectLoginMfa } from '../../../db/queries/identity/mfa.queries';
import { selectUserTenants } from '../../../db/queries/identity/tenants.queries';
import { withTenant } from '../../../db/tenant';
import type { IdentityDeps } from '../deps';
import { enqueueAuthEvent } from '../events';
import { recordAccountAudit } from './audit';
import { mfaKeys } from './mfa-keys';
import { openTotpSecret } from './secret-crypto';
import { matchTotp } from './totp';

export interface StoredTotp {
  /** The sealed secret (users.mfa_secret). */
  secret: Buffer;
  lastStep: number | null;
}

/**
 * accepted: the code matches a step of the ±1 window later than the last accepted one, and claiming
 * that step succeeded. reused: it matches a step already accepted (RFC 6238 section 5.2), or a
 * concurrent request with the same code claimed the step first. wrong: anything else.
 */
export type TotpVerdict = 'accepted' | 'reused' | 'wrong';

export async function checkTotpCode(
  deps: Pick<IdentityDeps, 'config'>, db: CommonQueryMethods, userId: string, stored: StoredTotp, code: string,
): Promise<TotpVerdict> {
  const secret = openTotpSecret(mfaKeys(deps.config.identity.mfa.encryptionKey).secretKey, userId, stored.secret);
  const step = await matchTotp(secret, code, stored.lastStep);
  if (step !== null) return await claimMfaStep(db, userId, step) ? 'accepted' : 'reused';
  // No step after the last accepted one matched: a match with no lower bound is therefore a step at
  // or before it, a code that was already used.
  return stored.lastStep !== null && await matchTotp(secret, code, null) !== null ? 'reused' : 'wrong';
}

/** Whether a code is good for the account now (checkTotpCode accepted it). */
export async function acceptTotpCode(
  deps: Pick<IdentityDeps, 'config'>, db: CommonQueryMethods, userId: string, stored: StoredTotp, code: string,
): Promise<boolean> {
  return await checkTotpCode(deps, db, userId, stored, code) === 'accepted';
}

/**
 * Login of an account with two-factor on, after its password was verified: no code is 401
 * mfa-required; a wrong or replayed code is 401 mfa-invalid and counts as a failed login in the
 * login throttle, so codes cannot be guessed faster than passwords. A replayed code also tells the
 * holder (reportReusedCode).
 */
export async function assertLoginSecondFactor(
  deps: IdentityDeps, user: { id: string; lastTenantId: string | null }, credentials: { email: string; mfaCode?: string }, ip: string,
): Promise<void> {
  if (credentials.mfaCode === undefined) throw problems.mfaRequired();
  const stored = await selectLoginMfa(deps.db, user.id);
  // Switched off since the account was read: nothing left to check.
  if (!stored) return;
  const verdict = await checkTotpCode(deps, deps.db, user.id, stored, credentials.mfaCode);
  if (verdict !== 'accepted') {
    await deps.throttle.recordFailure(credentials.email, ip);
    if (verdict === 'reused') await reportReusedCode(deps, user, ip);
    throw problems.mfaInvalid();
  }
}

/**
 * ASVS 2.8.5: a used code presented again with the correct password means someone who knows the
 * password watched or intercepted a code. It is logged, recorded in the audit trail and, through
 * auth.mfa.code_reused, mailed to the holder (services/notify/security-mail.ts). The record goes to
 * the tenant the account last chose, else its first one (a sign-in belongs to no tenant yet). A
 * failure to record it is logged and leaves the refusal as it is.
 */
async function reportReusedCode(deps: IdentityDeps, user: { id: string; lastTenantId: string | null }, ip: string): Promise<void> {
  deps.logger.warn({ userId: user.id, ip }, 'a two-factor code already used was presented again at sign-in');
  try {
    const tenants = await selectUserTenants(deps.db, user.id);
    const tenantId = tenants.find((tenant) => tenant.id === user.lastTenantId)?.id ?? tenants[0]?.id;
    if (!tenantId) return;
    await withTenant(deps.db, tenantId, async (tx) => {
      await recordAccountAudit(tx, { tenantId, userId: user.id, action: 'auth.mfa.code_reused', ip });
      await enqueueAuthEvent(tx, 'auth.mfa.code_reused', tenantId, user.id, { ip, detected_at: new Date().toISOString() });
    });
  } catch (err) {
    deps.logger.error({ err, userId: user.id }, 'the reused two-factor code could not be recorded');
  }
}
