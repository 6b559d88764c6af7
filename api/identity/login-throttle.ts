import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';

type Settings = Config['identity']['loginThrottle'];

interface Scope {
  key: string;
  freeAttempts: number;
}

/**
 * Slows password guessing per account (across IPs) and per IP (across accounts). Failures are
 * counted in Redis for a window; past the free attempts each further failure sets a wait of
 * 1, 2, 4 ... seconds (at most maxDelaySeconds) during which logins in that scope get 429 with
 * Retry-After, and are refused before any password is checked. Nothing outlives the window, and a
 * successful login clears the account's count, so no one can lock a victim out for good; the most
 * an attacker achieves is a bounded wait per guess.
 *
 * If Redis is unreachable the throttle lets logins through (logged): availability of login is
 * kept, and Argon2id still bounds the guessing rate.
 */
export class LoginThrottle {
  constructor(private readonly redis: Redis, private readonly settings: Settings, private readonly logger: Logger) {}

  /** Throws 429 rate-limit-exceeded while the account or the IP has to wait. */
  async assertAllowed(email: string, ip: string): Promise<void> {
    // One pipeline: both scopes in one round trip to Redis.
    const pipeline = this.redis.pipeline();
    for (const scope of this.scopes(email, ip)) pipeline.pttl(`${scope.key}:wait`);
    const waits = await this.tolerant(async () => (await pipeline.exec())!.map(([error, wait]) => {
      if (error) throw error;
      return wait as number;
    }));
    const longest = Math.max(0, ...(waits ?? []));
    if (longest > 0) throw problems.rateLimited(Math.ceil(longest / 1000));
  }

  async recordFailure(email: string, ip: string): Promise<void> {
    await this.tolerant(async () => {
      for (const scope of this.scopes(email, ip)) {
        const [[, count]] = await this.redis.multi()
          .incr(`${scope.key}:failures`)
          .expire(`${scope.key}:failures`, this.settings.windowSeconds, 'NX')
          .exec() as [[unknown, number]];
        const excess = count - scope.freeAttempts;
        if (excess > 0) {
          const waitSeconds = Math.min(2 ** (excess - 1), this.settings.maxDelaySeconds);
          await this.redis.set(`${scope.key}:wait`, '1', 'EX', waitSeconds);
        }
      }
    });
  }

  /** A correct password clears the account's count; the IP's count stays (one success proves little). */
  async recordSuccess(email: string): Promise<void> {
    const [account] = this.scopes(email, '');
    await this.tolerant(() => this.redis.del(`${account.key}:failures`, `${account.key}:wait`));
  }

  private scopes(email: string, ip: string): Scope[] {
    // The address is hashed so Redis holds no e-mail addresses.
    const account = createHash('sha256').update(email.toLowerCase()).digest('base64url');
    return [
      { key: `auth:login:account:${account}`, freeAttempts: this.settings.accountAttempts },
      { key: `auth:login:ip:${ip}`, freeAttempts: this.settings.ipAttempts },
    ];
  }

  private async tolerant<T>(work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (error) {
      this.logger.warn({ err: error }, 'login throttle unavailable; login not slowed');
      return undefined;
    }
  }
}
