import { hashRefreshToken, openSuccessor, sealSuccessor } from './refresh-token-crypto';
import { problems, type Problem } from '../../common/problems';
import { withTenant } from '../../db/tenant';
import {
  lockRefreshToken, markRotated, revokeFamily, selectRefreshTokenTenant,
} from '../../db/queries/identity/refresh-tokens.queries';
import { isActiveMember } from '../../db/queries/identity/tenants.queries';
import { selectUserProfile } from '../../db/queries/identity/users.queries';
import type { IdentityDeps, TokenPair } from './deps';
import { enqueueAuthEvent } from './events';
import { issuePair, publicPair } from './sessions';

const invalidToken = () => problems.unauthorized('The refresh token is not valid');

/**
 * Rotation with reuse detection. The token's row is locked, so concurrent refreshes with one token
 * are serialized:
 * - first use: a new pair in the same family; the old row records its successor and, sealed under
 *   the old token, the new pair;
 * - again within the grace window (a client that sent the refresh twice): the same pair, unsealed;
 * - again later: someone replays a stolen token, so the whole family is revoked and 401 answered.
 * A refusal that revokes must commit, so the transaction returns it and it is thrown afterwards.
 */
export async function refresh(deps: IdentityDeps, refreshToken: string): Promise<TokenPair> {
  const tokenHash = hashRefreshToken(refreshToken);
  const tenantId = await selectRefreshTokenTenant(deps.db, tokenHash);
  if (!tenantId) throw invalidToken();

  const outcome = await withTenant(deps.db, tenantId, async (tx): Promise<TokenPair | Problem> => {
    const stored = (await lockRefreshToken(tx, tokenHash))!;
    if (stored.revoked) return invalidToken();
    if (stored.rotatedAgoSeconds !== null) {
      if (stored.rotatedAgoSeconds <= deps.config.identity.ttl.refreshGrace && stored.successorPair) {
        return openSuccessor<TokenPair>(refreshToken, stored.successorPair);
      }
      await revokeFamily(tx, stored.familyId);
      deps.logger.warn({ familyId: stored.familyId, userId: stored.userId, tenantId }, 'rotated refresh token reused; family revoked');
      return invalidToken();
    }
    if (stored.expired) return problems.tokenExpired('The refresh token has expired');
    // The absolute lifetime (docs/reference/identity.md#rule-42): however often it was refreshed, a
    // session this old ends and its user signs in again. Its access tokens go with it (the revocation
    // is announced to every gateway), so none outlives the refusal.
    if (stored.sessionAgeSeconds >= deps.config.identity.ttl.refreshSessionMax) {
      await revokeFamily(tx, stored.familyId);
      return problems.tokenExpired('The session has reached its maximum lifetime; sign in again');
    }

    // The session ends with the membership or the account.
    const profile = await selectUserProfile(tx, stored.userId);
    if (!profile || profile.deletedAt !== null || profile.status === 'locked' || !await isActiveMember(tx, stored.userId)) {
      await revokeFamily(tx, stored.familyId);
      return invalidToken();
    }
    // An impersonation session stays one: the same actor, and never past its end.
    const impersonation = stored.impersonatorId ? { impersonatorId: stored.impersonatorId, endsAt: stored.expiresAt } : undefined;
    const issued = await issuePair(deps, tx, {
      userId: stored.userId, email: profile.email, tenantId, familyId: stored.familyId, impersonation, authenticatedAt: stored.authenticatedAt,
      // Read now, so a refresh after turning two-factor on (or off) carries the new state (docs/reference/identity.md#rule-48).
      mfa: profile.mfaEnabled,
    });
    const pair = publicPair(issued);
    await markRotated(tx, stored.id, issued.refreshTokenId, sealSuccessor(refreshToken, pair));
    return pair;
  });
  if (outcome instanceof Error) throw outcome;
  return outcome;
}

/**
 * POST /auth/logout: ends the session the refresh token belongs to (its whole family). The token
 * must be one of the caller's own in the caller's tenant; logging out twice is not an error.
 */
export async function logout(deps: IdentityDeps, auth: { userId: string; tenantId: string }, refreshToken: string): Promise<void> {
  await withTenant(deps.db, auth.tenantId, async (tx) => {
    const stored = await lockRefreshToken(tx, hashRefreshToken(refreshToken));
    if (!stored || stored.userId !== auth.userId) throw invalidToken();
    if (stored.revoked) return;
    await revokeFamily(tx, stored.familyId);
    await enqueueAuthEvent(tx, 'auth.user.logged_out', auth.tenantId, auth.userId, { logged_out_at: new Date().toISOString() });
  });
}
