import { currentRequestContext, runWithRequestContext, type AuthState } from '../../common/context';
import type { VerifiedTokens } from '../runtime/verified-tokens';
import type { SessionRevocations } from '../runtime/session-revocations';
import type { VerifiedApiKeys } from '../runtime/verified-api-keys';
import { apiKeyAuth } from './api-key-auth';
import { problems } from '../../common/problems';
import type { AppMiddleware } from '../context';

const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i;

/**
 * Runs first on every bearer route (before the body is read): one ES256 verification per token (then
 * remembered) and a lookup of its session among the ended ones, no database or network while the
 * gateway hears PostgreSQL's announcements, so the hot path stays cheap. The verified tenant and user become ctx.state.auth and
 * the request context of everything downstream (SQL under withTenant, Temporal, events).
 */
export function authenticate(tokens: VerifiedTokens, revocations: SessionRevocations, apiKeys: VerifiedApiKeys): AppMiddleware {
  return async (ctx, next) => {
    // An API key (X-API-Key, or a bearer value starting plat_) is its own branch (api/middleware/api-key-auth.ts).
    const auth = await apiKeyAuth(ctx, apiKeys) ?? await bearerAuth(ctx.get('authorization'), tokens, revocations);
    ctx.state.auth = auth;
    const { impersonatorId } = auth;
    const context = {
      ...currentRequestContext(), traceId: ctx.state.traceId, tenantId: auth.tenantId, actorId: auth.userId, ...(impersonatorId ? { impersonatorId } : {}),
    };
    await runWithRequestContext(context, next);
  };
}

/**
 * The caller of an `Authorization: Bearer <access token>` value (the HTTP header, or the gRPC
 * metadata of the EventService): 401 unauthorized without one, the token's own refusal otherwise,
 * and 401 for a token whose session has ended (a Map lookup while the gateway hears PostgreSQL's
 * announcements; api/runtime/session-revocations.ts).
 */
export async function bearerAuth(header: string | undefined, tokens: VerifiedTokens, revocations: SessionRevocations): Promise<AuthState> {
  const match = BEARER.exec(header ?? '');
  if (!match) throw problems.unauthorized('A bearer token is required');
  const claims = await tokens.verify(match[1]);
  await revocations.assertLive(claims.tenantId, claims.sid);
  // Under impersonation the request acts as the user and names the Platform Owner behind it, so
  // audit records (recordAudit) and Temporal calls (the platform-context header) carry both.
  const impersonation = claims.impersonatorId ? { impersonatorId: claims.impersonatorId } : {};
  const authTime = claims.authTime === undefined ? {} : { authTime: claims.authTime };
  const mfa = claims.mfa === undefined ? {} : { mfa: claims.mfa };
  return {
    userId: claims.sub, tenantId: claims.tenantId, email: claims.email, roles: claims.roles, sessionId: claims.sid, ...authTime, ...mfa, ...impersonation,
  };
}
