import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';

type Settings = Config['identity']['verifyEmailRequests'];

/**
 * A sliding window in a sorted set: drop entries older than the window, refuse when `limit` remain
 * (answering the milliseconds until the oldest leaves the window), otherwise record this request.
 * One script, so concurrent requests cannot both take the last slot; refused requests are not
 * recorded, so asking again while refused does not push the wait further out.
 */
const TAKE_SLOT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return tonumber(oldest[2]) + tonumber(ARGV[2]) - tonumber(ARGV[1])
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 0
`;

/**
 * At most 3 verification e-mails per hour per user (docs/reference/identity.md#rule-24), then 429 rate-limit-exceeded with
 * Retry-After. If Redis is unreachable the request goes through (logged), as with the login
 * throttle: the mail can only go to the user's own address, so the risk is a few extra mails.
 */
export class VerifyEmailLimit {
  constructor(private readonly redis: Redis, private readonly settings: Settings, private readonly logger: Logger) {}

  async take(userId: string): Promise<void> {
    const windowMs = this.settings.windowSeconds * 1000;
    let waitMs: number;
    try {
      waitMs = Number(await this.redis.eval(TAKE_SLOT, 1, `auth:verify-email:${userId}`, Date.now(), windowMs, this.settings.limit, randomUUID()));
    } catch (error) {
      this.logger.warn({ err: error }, 'verify-email limit unavailable; request not limited');
      return;
    }
    if (waitMs > 0) throw problems.rateLimited(Math.ceil(waitMs / 1000));
  }
}
