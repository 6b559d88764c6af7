import type { AuthState } from '../../common/context';
import { problems, type Problem } from '../../common/problems';
import { lockMfaState } from '../../db/queries/identity/mfa.queries';
import { revokeOtherRefreshTokens, updatePassword } from '../../db/queries/identity/security-flows.queries';
import { changeAccount } from './account-changes';
import type { IdentityDeps } from './deps';
import { enqueueAuthEvent } from './events';
import { acceptTotpCode } from './mfa/second-factor';
import { hashPassword, verifyPassword } from './passwords';

export interface PasswordChange {
  currentPassword: string;
  /** Checked by the route's schema as at registration and reset (length, breached list). */
  newPassword: string;
  /** A current TOTP code; required when two-factor is on. */
  code?: string;
}

/**
 * POST /auth/change-password (ASVS 2.1.6): the holder of a session proves the account again, with
 * the current password and, when two-factor is on, a current code, so a stolen access token alone
 * cannot take the account over. Wrong answers count in the login throttle like failed logins (a
 * session must not allow faster guessing than the login does) and a throttled account is refused
 * with 429 before any check. In one transaction the new Argon2id hash is stored, every other
 * session of the account in every tenant ends (the gateways hear of each, migration 0039), and
 * auth.password.changed is written to the outbox, which mails the holder (services/notify/security-mail.ts).
 * The session the change was made from stays signed in.
 */
export async function changePassword(deps: IdentityDeps, auth: AuthState, change: PasswordChange, ip: string): Promise<void> {
  await deps.throttle.assertAllowed(auth.email, ip);
  // A refusal is returned, not thrown, so a code that was claimed stays claimed (the transaction commits).
  const refusal = await changeAccount(deps, auth.tenantId, auth.userId, async (tx): Promise<Problem | null> => {
    const state = await lockMfaState(tx, auth.userId);
    if (!state) throw problems.unauthorized('The account is no longer a member of this tenant');
    if (!await verifyPassword(deps.config.identity.passwordPepper, state.passwordHash, change.currentPassword)) return problems.invalidCredentials();
    if (state.mfaEnabled && state.secret) {
      if (change.code === undefined) return problems.mfaRequired();
      if (!await acceptTotpCode(deps, tx, auth.userId, { secret: state.secret, lastStep: state.lastStep }, change.code)) return problems.mfaInvalid();
    }
    await updatePassword(tx, auth.userId, await hashPassword(deps.config.identity.passwordPepper, change.newPassword));
    const sessionsRevoked = await revokeOtherRefreshTokens(tx, auth.userId, auth.sessionId ?? null);
    await enqueueAuthEvent(tx, 'auth.password.changed', auth.tenantId, auth.userId, {
      method: 'change', sessions_revoked: sessionsRevoked, changed_at: new Date().toISOString(),
    });
    return null;
  });
  if (refusal) {
    if (refusal.type === 'invalid-credentials' || refusal.type === 'mfa-invalid') await deps.throttle.recordFailure(auth.email, ip);
    throw refusal;
  }
}
