import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';

type Settings = Config['identity']['loginThrottle'];

/** What LoginThrottle.assertAllowed saw of the account. */
export interface ThrottleCheck {
  accountFailures: boolean;
}

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

  /**
   * Throws 429 rate-limit-exceeded while the account or the IP has to wait. Otherwise answers whether
   * the account had failures counted, so that a success only clears a count there is (recordSuccess).
   */
  async assertAllowed(email: string, ip: string): Promise<ThrottleCheck> {
    const [account, address] = this.scopes(email, ip);
    // One round trip to Redis: both waits and whether the account has failures.
    const replies = await this.tolerant(async () => (await this.redis.pipeline()
      .pttl(`${account.key}:wait`)
      .pttl(`${address.key}:wait`)
      .exists(`${account.key}:failures`)
      .exec())!.map(([error, reply]) => {
      if (error) throw error;
      return reply as number;
    }));
    // Unknown (Redis unreachable): a success then tries to clear the count anyway.
    if (!replies) return { accountFailures: true };
    const [accountWait, addressWait, accountFailures] = replies;
    const longest = Math.max(0, accountWait, addressWait);
    if (longest > 0) throw problems.rateLimited(Math.ceil(longest / 1000));
    return { accountFailures: accountFailures > 0 };
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

  /**
   * A correct password clears the account's count; the IP's count stays (one success proves little).
   * Given the check of the same attempt that saw no count, there is nothing to clear and Redis is not
   * asked: a failure counted in between (someone else guessing at that moment) then stays counted,
   * which only ever slows guessing more.
   */
  async recordSuccess(email: string, check?: ThrottleCheck): Promise<void> {
    if (check && !check.accountFailures) return;
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
