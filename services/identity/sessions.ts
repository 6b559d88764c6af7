import type { CommonQueryMethods } from 'slonik';
import { outboxEventOf, type EventInput } from '../events/publish';
import { currentRequestContext, type AuthState } from '../../common/context';
import { newId } from '../../common/ids';
import { hashRefreshToken, newRefreshToken } from './refresh-token-crypto';
import { insertSession, openSignIn, setAuthenticatedAt, type NewRefreshToken } from '../../db/queries/identity/refresh-tokens.queries';
import type { UserTenant } from '../../db/queries/identity/tenants.queries';
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
  /**
   * The sign-in time (seconds since the epoch) the session inherits: the rotated token's on a refresh,
   * the caller's when a session is opened from another without a credential (switch tenant,
   * impersonation). Absent for a sign-in, which proved its credential now. It becomes the access
   * token's `auth_time` (docs/decisions/identity.md, Step-up for high-value actions).
   */
  authenticatedAt?: number;
  /**
   * Whether the account has two-factor on, from the row the flow has just read (no query of its own): the
   * access token's `mfa`, which REQUIRE_MFA_FOR_ADMINS reads (docs/reference/identity.md#rule-48). Under
   * impersonation it is the impersonated account's, like every other claim.
   */
  mfa: boolean;
}

export interface IssuedPair extends TokenPair {
  refreshTokenId: string;
}

/**
 * Issues a token pair: the access token carries the role names the user holds in the subject's
 * tenant now, and the refresh token is stored (hashed) in the same statement as the grants are read
 * and, when given, the event that reports the session is written to the outbox (insertSession). `db`
 * is the caller's tenant transaction when the pair belongs to a larger change (registration,
 * rotation), or the pool when the session is the whole change: then that one statement is the
 * transaction, and nothing else is needed around it.
 */
export async function issuePair(
  deps: Pick<IdentityDeps, 'tokens' | 'config'>,
  db: CommonQueryMethods,
  subject: SessionSubject,
  event?: EventInput,
): Promise<IssuedPair> {
  const secret = newRefreshSecret(deps, subject.userId, subject.familyId);
  const roles = await insertSession(
    db, { ...secret.stored, tenantId: subject.tenantId, impersonation: subject.impersonation }, event ? outboxEventOf(event) : null,
  );
  // Only an inherited time is written: a sign-in's token already took the time of its statement.
  if (subject.authenticatedAt !== undefined) await setAuthenticatedAt(db, secret.stored.id, subject.authenticatedAt);
  return signPair(deps, subject, roles, secret);
}

/**
 * The sign-in time a session opened from the caller's inherits. A token of the previous release names
 * none; 0 (the epoch) is never recent, so such a session cannot step up without a new sign-in.
 */
export function inheritedAuthTime(auth: Pick<AuthState, 'authTime'>): number {
  return auth.authTime ?? 0;
}

/** What a sign-in opened: the user's active tenants, and the pair when one of them was chosen. */
export interface SignInSession {
  tenants: UserTenant[];
  pair: IssuedPair | null;
}

/**
 * The end of a sign-in, once the account is known to be usable: the user's active tenants are read
 * and, when one is chosen (the only one, or the remembered one of several), the session opened in it
 * with `event`, all in one statement (openSignIn). The event is built for whichever tenant that is:
 * the statement sets its tenant.
 */
export async function openSignInSession(
  deps: Pick<IdentityDeps, 'tokens' | 'config' | 'db'>,
  user: { id: string; email: string; lastTenantId: string | null; mfaEnabled: boolean },
  event: EventInput,
): Promise<SignInSession> {
  const secret = newRefreshSecret(deps, user.id);
  const { tenants, tenantId, roles } = await openSignIn(deps.db, secret.stored, user.lastTenantId, outboxEventOf(event));
  if (!tenantId || !roles) return { tenants, pair: null };
  return { tenants, pair: await signPair(deps, { userId: user.id, email: user.email, tenantId, mfa: user.mfaEnabled }, roles, secret) };
}

/** A new refresh token: the secret handed out once, and what is stored of it (its hash). */
interface RefreshSecret {
  refreshToken: string;
  stored: Omit<NewRefreshToken, 'tenantId' | 'impersonation'>;
}

/**
 * A new refresh token: the client address and user agent of the request issuing it (the request
 * context, api/middleware/request-context.ts) are stored with it for the session list; the agent is
 * cut to the column's 512 characters.
 */
function newRefreshSecret(deps: Pick<IdentityDeps, 'config'>, userId: string, familyId?: string): RefreshSecret {
  const refreshToken = newRefreshToken();
  const client = currentRequestContext()?.client;
  return {
    refreshToken,
    stored: {
      id: newId(), familyId: familyId ?? newId(), userId, tokenHash: hashRefreshToken(refreshToken), ttlSeconds: deps.config.identity.ttl.refreshToken,
      ip: client?.ip ?? null, userAgent: client?.userAgent?.slice(0, 512) ?? null,
    },
  };
}

/** The access token for the roles just read, beside the stored refresh token. */
async function signPair(
  deps: Pick<IdentityDeps, 'tokens'>, subject: SessionSubject, roles: string[], secret: RefreshSecret,
): Promise<IssuedPair> {
  const { impersonation } = subject;
  // The session is the refresh-token family: every rotation's access token names the same one. A
  // sign-in's auth_time is taken after its token was stored, so the stored time a refresh reads back
  // is never later than the one the sign-in's access token carries.
  const authTime = subject.authenticatedAt ?? Math.floor(Date.now() / 1000);
  const claims = {
    sub: subject.userId, email: subject.email, tenantId: subject.tenantId, roles, sid: secret.stored.familyId, authTime, mfa: subject.mfa,
  };
  const access = impersonation
    ? await deps.tokens.issueImpersonationToken(claims, impersonation.impersonatorId, new Date(impersonation.endsAt))
    : await deps.tokens.issueAccessToken(claims);
  return { accessToken: access.token, refreshToken: secret.refreshToken, expiresAt: access.expiresAt.toISOString(), refreshTokenId: secret.stored.id };
}

export function publicPair({ accessToken, refreshToken, expiresAt }: TokenPair): TokenPair {
  return { accessToken, refreshToken, expiresAt };
}
