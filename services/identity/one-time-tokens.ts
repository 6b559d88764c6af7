import { timingSafeEqual } from 'node:crypto';
import type { Config } from '../../common/config';
import { newId } from '../../common/ids';
import { problems } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import {
  deleteOneTimeToken, insertOneTimeToken, selectOneTimeTokenTenant, type ConsumedOneTimeToken, type OneTimeTokenPurpose,
} from '../../db/queries/identity/one-time-tokens.queries';
import { hashRefreshToken, newRefreshToken } from './refresh-token-crypto';

export type { OneTimeTokenPurpose };
export type RedeemedOneTimeToken = Omit<ConsumedOneTimeToken, 'tokenHash' | 'expired'>;

/**
 * Verification, reset, invitation and set-password tokens (docs/reference/identity.md#rule-23): 32
 * random bytes in base64url, the same opaque form as refresh tokens, of which the database keeps only
 * the SHA-256. They reach the user only by e-mail, and work once.
 */
export const newOneTimeTokenValue = newRefreshToken;
export const hashOneTimeToken = hashRefreshToken;

/** A set-password link of POST /users lives as long as an invitation (docs/decisions/identity.md, One-time tokens). */
export function oneTimeTokenTtl(ttl: Config['identity']['oneTimeTokenTtl'], purpose: OneTimeTokenPurpose): number {
  switch (purpose) {
    case 'verify_email': return ttl.verifyEmail;
    case 'reset_password': return ttl.resetPassword;
    case 'invite':
    case 'set_password': return ttl.invite;
  }
}

export interface OneTimeTokenDraft {
  purpose: OneTimeTokenPurpose;
  /** The account it acts on; null for an invitation of someone without one. */
  userId: string | null;
  /** The tenant it was issued in: redemption runs in that tenant's transaction. */
  tenantId: string;
  email: string;
  payload?: Record<string, unknown>;
}

export interface IssuedOneTimeToken {
  id: string;
  /** The token itself: it goes into the e-mail and nowhere else. */
  value: string;
  expiresAt: string;
}

/** Issues a token in the caller's transaction, so it exists exactly when the change that needs it does. */
export async function issueOneTimeToken(
  tx: DatabaseTransactionConnection,
  ttl: Config['identity']['oneTimeTokenTtl'],
  draft: OneTimeTokenDraft,
): Promise<IssuedOneTimeToken> {
  const value = newOneTimeTokenValue();
  const id = newId();
  const expiresAt = await insertOneTimeToken(tx, {
    id, purpose: draft.purpose, tokenHash: hashOneTimeToken(value), userId: draft.userId, tenantId: draft.tenantId,
    email: draft.email, payload: draft.payload ?? {}, ttlSeconds: oneTimeTokenTtl(ttl, draft.purpose),
  });
  return { id, value, expiresAt };
}

/**
 * Redeems a token of one of `purposes` and runs `work` in the same transaction of the token's tenant:
 * the token is deleted if and only if the work commits. Unknown, used and other-purpose tokens are
 * 401 unauthorized; a token past its TTL is 401 token-expired and stays until the maintenance sweep
 * removes it (the refusal rolls back, so replaying it keeps saying token-expired, not unauthorized).
 *
 * The row is found by the hash through a unique index; the stored hash is then compared with
 * timingSafeEqual as well, so no byte-by-byte comparison of secret material happens in our code.
 * (Timing of the index lookup reveals at most a prefix of a SHA-256, which says nothing about a token.)
 */
export async function redeemOneTimeToken<T>(
  db: DatabasePool,
  purposes: readonly OneTimeTokenPurpose[],
  value: string,
  work: (tx: DatabaseTransactionConnection, token: RedeemedOneTimeToken) => Promise<T>,
): Promise<T> {
  const hash = hashOneTimeToken(value);
  const tenantId = await selectOneTimeTokenTenant(db, hash, purposes);
  if (!tenantId) throw invalidToken();
  return withTenant(db, tenantId, async (tx) => {
    const consumed = await deleteOneTimeToken(tx, hash, purposes);
    if (!consumed || !timingSafeEqual(consumed.tokenHash, hash)) throw invalidToken();
    if (consumed.expired) throw problems.tokenExpired('The link has expired; request a new one');
    const { tokenHash: _hash, expired: _expired, ...token } = consumed;
    return work(tx, token);
  });
}

function invalidToken() {
  return problems.unauthorized('The link is invalid or has already been used');
}
