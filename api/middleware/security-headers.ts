import type { AppMiddleware } from '../context';

/**
 * The headers every answer of the gateway carries, set before anything else runs so that problem
 * answers, the fallback's 404 and 405, and redirects carry them too (docs/security.md, V13/V14):
 * - `X-Content-Type-Options: nosniff`: a browser takes the declared type (JSON, problem+json, a
 *   file's own type with ?download=1) and never sniffs an answer into HTML or script.
 * - `Cache-Control: no-store`: answers hold a tenant's data, tokens (login, refresh, MFA) or short-lived
 *   URLs, and no browser or shared cache may keep them. It is a default: a route whose answer is public
 *   and the same for everyone (the JWKS, the documentation's assets) sets its own, and routes that
 *   serve files say `private, no-store` themselves (docs/decisions/gateway.md, "Security headers").
 */
export function securityHeaders(): AppMiddleware {
  return (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'no-store');
    return next();
  };
}
