import type { AppMiddleware } from '../context';
import { clientIpOf, compileProxyTrust } from '../http/client-ip';

/**
 * Decides the request's client address once, before anything reads ctx.ip: the rate limit's `ip`
 * key, actorIp of audit records (request audit, POST /audit/records, api/routes/caller.ts) and the
 * login throttle all read it. Koa's own reading of X-Forwarded-For (app.proxy) stays off, since it
 * believes the leftmost entry from any peer; this believes only the proxies of TRUSTED_PROXIES.
 */
export function clientIp(trustedProxies: readonly string[]): AppMiddleware {
  const trust = compileProxyTrust(trustedProxies);
  // Nobody trusted: Koa's ctx.ip is already the socket's peer.
  if (!trust) return (_ctx, next) => next();
  return (ctx, next) => {
    ctx.request.ip = clientIpOf(ctx.req.socket.remoteAddress, ctx.get('x-forwarded-for') || undefined, trust);
    return next();
  };
}
