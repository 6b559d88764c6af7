import { newId } from '../../common/ids';
import { hashRefreshToken, newRefreshToken } from '../../common/identity/refresh-token-crypto';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { insertRefreshToken } from '../../db/queries/identity/refresh-tokens.queries';
import { selectRoleGrants } from '../../db/queries/identity/roles.queries';
import type { IdentityDeps, TokenPair } from './deps';

export interface SessionSubject {
  userId: string;
  email: string;
  tenantId: string;
  /** The family of the token being rotated; a new login starts a new family. */
  familyId?: string;
  /**
   * The Platform Owner acting as this user, and when that ends: the access token carries
   * `act: {sub: impersonatorId}` and both tokens expire at endsAt (ISO 8601), rotation or not.
   */
  impersonation?: { impersonatorId: string; endsAt: string };
}

export interface IssuedPair extends TokenPair {
  refreshTokenId: string;
}

/**
 * Issues a token pair inside the caller's tenant transaction: the access token carries the role
 * names the user holds in that tenant now, and the refresh token is stored (hashed) in the same
 * transaction as whatever caused the issue (registration, login, rotation).
 */
export async function issuePair(
  deps: Pick<IdentityDeps, 'tokens' | 'config'>,
  tx: DatabaseTransactionConnection,
  subject: SessionSubject,
): Promise<IssuedPair> {
  const { roles } = await selectRoleGrants(tx, subject.userId);
  const claims = { sub: subject.userId, email: subject.email, tenantId: subject.tenantId, roles };
  const { impersonation } = subject;
  const access = impersonation
    ? await deps.tokens.issueImpersonationToken(claims, impersonation.impersonatorId, new Date(impersonation.endsAt))
    : await deps.tokens.issueAccessToken(claims);
  const refreshToken = newRefreshToken();
  const refreshTokenId = newId();
  await insertRefreshToken(tx, {
    id: refreshTokenId,
    familyId: subject.familyId ?? newId(),
    userId: subject.userId,
    tenantId: subject.tenantId,
    tokenHash: hashRefreshToken(refreshToken),
    ttlSeconds: deps.config.identity.ttl.refreshToken,
    impersonation,
  });
  return { accessToken: access.token, refreshToken, expiresAt: access.expiresAt.toISOString(), refreshTokenId };
}

export function publicPair({ accessToken, refreshToken, expiresAt }: TokenPair): TokenPair {
  return { accessToken, refreshToken, expiresAt };
}
