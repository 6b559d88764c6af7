import type { Config } from '../../common/config';
import { ADMIN_ROLE_NAMES } from '../../services/access/permissions';
import { problems } from '../../common/problems';
import type { RateLimitDecision, SlidingWindowLimiter } from '../runtime/rate-limiter';
import type { AppMiddleware } from '../context';
import type { RateLimitGroup } from '../http/route-registry';


export interface RateLimitOptions {
  limiter: SlidingWindowLimiter;
  settings: Config['rateLimit'];
  /** Counts refusals for /metrics. */
  onRejected?(group: RateLimitGroup): void;
}

/**
 * Counts the request against its route's group key and answers 429 `rate-limit-exceeded` with
 * Retry-After (and retryAfter in the body) when the window is full. The X-RateLimit-* headers are
 * set on every counted response. If Redis cannot answer, the request passes (logged): the limit
 * protects capacity, and refusing every request while the cache is down would turn a cache
 * outage into a full outage.
 */
export function rateLimit(group: RateLimitGroup, options: RateLimitOptions): AppMiddleware {
  const { limiter, settings } = options;
  return async (ctx, next) => {
    const auth = ctx.state.auth;
    const limit = auth?.roles.some((role) => ADMIN_ROLE_NAMES.has(role)) ? settings.adminLimit : settings.limit;
    let decision: RateLimitDecision | undefined;
    try {
      decision = await limiter.consume(groupKey(group, ctx), limit, settings.windowMs);
    } catch (error) {
      ctx.state.log.warn({ err: error }, 'rate limiter unavailable; request not counted');
    }
    if (decision) {
      ctx.set('X-RateLimit-Limit', String(decision.limit));
      ctx.set('X-RateLimit-Remaining', String(decision.remaining));
      ctx.set('X-RateLimit-Reset', String(decision.resetSeconds));
      if (!decision.allowed) {
        options.onRejected?.(group);
        throw problems.rateLimited(decision.retryAfterSeconds);
      }
    }
    await next();
  };
}

/**
 * The counter a request is charged to. A route grouped by user or tenant that is reached without
 * a token (a public route) falls back to the client address, and so does an API-key route called
 * without a key. A key is counted by its id (authentication has verified it), so Redis holds no
 * secrets; on a route grouped by user, a key counts as its own user (`apikey:<id>`).
 */
function groupKey(group: RateLimitGroup, ctx: Parameters<AppMiddleware>[0]): string {
  const auth = ctx.state.auth;
  switch (group) {
    case 'user':
      return auth ? `user:${auth.tenantId}:${auth.userId}` : `ip:${ctx.ip}`;
    case 'tenant':
      return auth ? `tenant:${auth.tenantId}` : `ip:${ctx.ip}`;
    case 'apiKey':
      return auth?.apiKey ? `key:${auth.tenantId}:${auth.apiKey.id}` : `ip:${ctx.ip}`;
    case 'ip':
      return `ip:${ctx.ip}`;
  }
}
