import type { ChainableCommander, Redis } from 'ioredis';
import { TickBatch } from './tick-batch';

/**
 * A sliding-window counter in Redis (the estimate Cloudflare and nginx-style limiters use): the
 * count of the current fixed window plus the previous window's count weighted by how much of it
 * still overlaps the sliding window. One Lua script reads and increments atomically, and takes
 * the time from Redis itself, so several gateway processes with drifting clocks share one count.
 * A refused request is not counted, so a client that keeps retrying is not punished further.
 */
const SLIDING_WINDOW = `
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local index = math.floor(nowMs / window)
local elapsed = nowMs - index * window
local currentKey = KEYS[1] .. ':' .. index
local current = tonumber(redis.call('GET', currentKey) or '0')
local previous = tonumber(redis.call('GET', KEYS[1] .. ':' .. (index - 1)) or '0')
local estimate = previous * (window - elapsed) / window + current
if estimate + 1 > limit then
  return {0, current, previous, elapsed}
end
current = redis.call('INCR', currentKey)
if current == 1 then redis.call('PEXPIRE', currentKey, window * 2) end
return {1, current, previous, elapsed}
`;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends (X-RateLimit-Reset). */
  resetSeconds: number;
  /** Seconds to wait before a retry can succeed; 0 when allowed. */
  retryAfterSeconds: number;
}

type ScriptResult = [allowed: number, current: number, previous: number, elapsed: number];

/** The script as a command of a pipeline: sent by its SHA (EVALSHA), not re-sent whole on every request. */
type LimiterPipeline = ChainableCommander & {
  rateLimitSlidingWindow(key: string, windowMs: number, limit: number): LimiterPipeline;
};

interface Count {
  key: string;
  windowMs: number;
  limit: number;
}

/**
 * The counts of the requests read in the same tick leave as one pipeline (TickBatch): one socket
 * write and one reply read for the burst instead of one per request. Each count is still its own
 * atomic script run.
 */
export class SlidingWindowLimiter {
  private readonly counts: TickBatch<Count, ScriptResult>;

  constructor(redis: Redis, private readonly prefix = 'ratelimit') {
    redis.defineCommand('rateLimitSlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW });
    this.counts = new TickBatch(async (counts) => {
      const pipeline = redis.pipeline() as LimiterPipeline;
      for (const { key, windowMs, limit } of counts) pipeline.rateLimitSlidingWindow(key, windowMs, limit);
      const replies = await pipeline.exec();
      return counts.map((_, index) => {
        const [error, result] = replies?.[index] ?? [new Error('Redis did not answer the rate-limit count')];
        return error ?? (result as ScriptResult);
      });
    });
  }

  async consume(key: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    const [allowed, current, previous, elapsed] = await this.counts.run({ key: `${this.prefix}:${key}`, windowMs, limit });
    const overlap = (windowMs - elapsed) / windowMs;
    const estimate = previous * overlap + current;
    return {
      allowed: allowed === 1,
      limit,
      remaining: Math.max(0, Math.floor(limit - estimate)),
      resetSeconds: Math.max(1, Math.ceil((windowMs - elapsed) / 1000)),
      retryAfterSeconds: allowed === 1 ? 0 : retryAfter(limit, current, previous, elapsed, windowMs),
    };
  }
}

/**
 * How long until the estimate drops below the limit. Within this window the previous count decays
 * linearly; if the current count alone fills the limit, the wait runs into the next window, where
 * this window's count becomes the decaying one.
 */
function retryAfter(limit: number, current: number, previous: number, elapsed: number, windowMs: number): number {
  const untilWindowEnd = windowMs - elapsed;
  let waitMs: number;
  if (current + 1 <= limit && previous > 0) {
    // previous * (windowMs - elapsed - t) / windowMs + current + 1 <= limit
    waitMs = untilWindowEnd - ((limit - current - 1) * windowMs) / previous;
  } else {
    // In the next window: current * (windowMs - t') / windowMs + 1 <= limit
    waitMs = untilWindowEnd + Math.max(0, windowMs - ((limit - 1) * windowMs) / Math.max(current, 1));
  }
  return Math.max(1, Math.ceil(waitMs / 1000));
}
