import type { CommonQueryMethods } from 'slonik';
import { outboxEventOf, type EventInput } from '../../common/events/publish';
import { newId } from '../../common/ids';
import { hashRefreshToken, newRefreshToken } from '../../common/identity/refresh-token-crypto';
import { insertSession } from '../../db/queries/identity/refresh-tokens.queries';
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
 * Issues a token pair: the access token carries the role names the user holds in the subject's
 * tenant now, and the refresh token is stored (hashed) in the same statement as the grants are read
 * and, when given, the event that reports the session is written to the outbox (insertSession). `db`
 * is the caller's tenant transaction when the pair belongs to a larger change (registration,
 * rotation), or the pool when the session is the whole change (a login): then that one statement is
 * the transaction, and nothing else is needed around it.
 */
export async function issuePair(
  deps: Pick<IdentityDeps, 'tokens' | 'config'>,
  db: CommonQueryMethods,
  subject: SessionSubject,
  event?: EventInput,
): Promise<IssuedPair> {
  const refreshToken = newRefreshToken();
  const refreshTokenId = newId();
  const { impersonation } = subject;
  const roles = await insertSession(db, {
    id: refreshTokenId,
    familyId: subject.familyId ?? newId(),
    userId: subject.userId,
    tenantId: subject.tenantId,
    tokenHash: hashRefreshToken(refreshToken),
    ttlSeconds: deps.config.identity.ttl.refreshToken,
    impersonation,
  }, event ? outboxEventOf(event) : null);
  const claims = { sub: subject.userId, email: subject.email, tenantId: subject.tenantId, roles };
  const access = impersonation
    ? await deps.tokens.issueImpersonationToken(claims, impersonation.impersonatorId, new Date(impersonation.endsAt))
    : await deps.tokens.issueAccessToken(claims);
  return { accessToken: access.token, refreshToken, expiresAt: access.expiresAt.toISOString(), refreshTokenId };
}

export function publicPair({ accessToken, refreshToken, expiresAt }: TokenPair): TokenPair {
  return { accessToken, refreshToken, expiresAt };
}
