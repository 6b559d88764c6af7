import { hashPassword } from './passwords';
import { issueOneTimeToken, redeemOneTimeToken } from './one-time-tokens';
import { problems } from '../../common/problems';
import { withTenant } from '../../db/tenant';
import { revokeAllRefreshTokens, updatePasswordByLink } from '../../db/queries/identity/security-flows.queries';
import { selectUserTenants } from '../../db/queries/identity/tenants.queries';
import { selectUserForLogin } from '../../db/queries/identity/users.queries';
import { changingAccounts } from './account-changes';
import type { IdentityDeps } from './deps';
import { emailLink } from './email-links';
import { enqueueAuthEvent } from './events';

/**
 * POST /auth/request-reset answers 202 at once and looks the address up afterwards, detached from
 * the request: the request does identical work whether or not the account exists, so neither its
 * answer nor its timing tells them apart (docs/reference/identity.md#rule-25). The cost is that a
 * gateway crashing in the milliseconds after the answer loses that one request's mail; the user
 * asks again. Failures are logged, never shown.
 */
export function requestPasswordReset(deps: IdentityDeps, email: string): void {
  startPasswordReset(deps, email).catch((err: unknown) => deps.logger.error({ err }, 'password reset mail not started'));
}

/**
 * A link is sent only for an account that exists, is not deleted and belongs to a tenant (it could
 * not sign in otherwise). The token lives in the tenant the account last chose, else its first one:
 * its redemption runs there.
 */
async function startPasswordReset(deps: IdentityDeps, email: string): Promise<void> {
  const user = await selectUserForLogin(deps.db, email);
  if (!user || user.deletedAt !== null) return;
  const tenants = await selectUserTenants(deps.db, user.id);
  const tenant = tenants.find((candidate) => candidate.id === user.lastTenantId) ?? tenants[0];
  if (!tenant) return;
  await withTenant(deps.db, tenant.id, async (tx) => {
    const token = await issueOneTimeToken(tx, deps.config.identity.oneTimeTokenTtl, {
      purpose: 'reset_password', userId: user.id, tenantId: tenant.id, email: user.email,
    });
    await deps.mailer.send({
      to: user.email,
      template: 'reset-password',
      data: { link: emailLink(deps.config, 'reset-password', token.value), expiresAt: token.expiresAt },
    }, `reset-password:${token.id}`, tenant.id);
  });
}

/**
 * POST /auth/reset-password, also the redemption of the set-password link of POST /users: in one
 * transaction the token is consumed, the new Argon2id hash stored (the link proves the address, so it
 * is marked verified), every session of the account in every tenant revoked, and
 * auth.password.changed written to the outbox. The password was checked by the route's schema.
 */
export function resetPassword(deps: IdentityDeps, token: string, password: string): Promise<{ message: string }> {
  return changingAccounts(deps, (changed) => redeemOneTimeToken(deps.db, ['reset_password', 'set_password'], token, async (tx, redeemed) => {
    // Hashed only once the token proved valid, so invalid tokens cost no Argon2id work.
    const passwordHash = await hashPassword(deps.config.identity.passwordPepper, password);
    if (!redeemed.userId || !await updatePasswordByLink(tx, redeemed.userId, redeemed.email, passwordHash)) {
      throw problems.unauthorized('The link no longer matches the account');
    }
    changed(redeemed.userId);
    const revokedSessions = await revokeAllRefreshTokens(tx, redeemed.userId);
    await enqueueAuthEvent(tx, 'auth.password.changed', redeemed.tenantId, redeemed.userId, {
      method: redeemed.purpose === 'reset_password' ? 'reset' : 'set',
      sessions_revoked: revokedSessions,
      changed_at: new Date().toISOString(),
    });
    return { message: 'The password was changed; every session was signed out. Sign in with the new password.' };
  }));
}
