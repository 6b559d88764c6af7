import { LRUCache } from 'lru-cache';
import type { TokenService, VerifiedAccess } from '../../services/identity/tokens';
import { problems } from '../../common/problems';

/**
 * Access tokens already verified by this process, so a client sending the same token on every
 * request pays for one ES256 verification instead of one per request (a fifth of the gateway's CPU
 * under load). Safe because a token never changes meaning: the cached answer is the one the
 * signature check gave, the expiry is checked again on every use and the entry leaves the cache at
 * the token's exp. A token that failed verification is never cached. Bounded by count (LRU), so a
 * flood of distinct tokens costs memory no larger than `maxEntries` answers.
 */
export class VerifiedTokens {
  private readonly cache: LRUCache<string, VerifiedAccess>;

  constructor(private readonly tokens: TokenService, maxEntries: number) {
    this.cache = new LRUCache({ max: maxEntries, ttlAutopurge: false });
  }

  async verify(token: string): Promise<VerifiedAccess> {
    const cached = this.cache.get(token);
    if (cached) {
      if (cached.exp * 1000 <= Date.now()) throw problems.tokenExpired('The token has expired');
      return cached;
    }
    const claims = await this.tokens.verifyAccessToken(token);
    this.cache.set(token, claims, { ttl: Math.max(1, claims.exp * 1000 - Date.now()) });
    return claims;
  }
}
