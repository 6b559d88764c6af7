import { currentRequestContext, runWithRequestContext } from '../../common/context';
import type { VerifiedTokens } from '../runtime/verified-tokens';
import { problems } from '../../common/problems';
import type { AppMiddleware } from '../context';

const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i;

/**
 * Runs first on every bearer route (before the body is read): one ES256 verification per token (then
 * remembered), no database or network, so the hot path stays cheap. The verified tenant and user become ctx.state.auth and
 * the request context of everything downstream (SQL under withTenant, Temporal, events).
 */
export function authenticate(tokens: VerifiedTokens): AppMiddleware {
  return async (ctx, next) => {
    const match = BEARER.exec(ctx.get('authorization'));
    if (!match) throw problems.unauthorized('A bearer token is required');
    const claims = await tokens.verify(match[1]);
    // Under impersonation the request acts as the user and names the Platform Owner behind it, so
    // audit records (recordAudit) and Temporal calls (the platform-context header) carry both.
    const impersonation = claims.impersonatorId ? { impersonatorId: claims.impersonatorId } : {};
    ctx.state.auth = { userId: claims.sub, tenantId: claims.tenantId, email: claims.email, roles: claims.roles, ...impersonation };
    const context = { ...currentRequestContext(), traceId: ctx.state.traceId, tenantId: claims.tenantId, actorId: claims.sub, ...impersonation };
    await runWithRequestContext(context, next);
  };
}
