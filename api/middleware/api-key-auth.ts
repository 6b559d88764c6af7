import { apiKeyActorId, type AuthState } from '../../common/context';
import { problems } from '../../common/problems';
import { looksLikeApiKey } from '../../services/identity/api-key-format';
import type { VerifiedApiKeys } from '../runtime/verified-api-keys';

const BEARER_KEY = /^Bearer (\S+)$/i;

/**
 * Routes that act for a signed-in person and mean nothing for a service account: the caller's own
 * profile, avatar, two-factor, recovery codes, tenants, sessions, logout, password and impersonation
 * (every bearer route under /auth/), except sending an invitation, which users.create governs like
 * any tenant operation (POST /users does the same). A key calling one is refused with 403 forbidden
 * saying so (docs/decisions/identity.md, API keys).
 */
const PERSONAL = /^(?:\/api)?\/v1\/auth\/(?!invite\/?$)/i;

/**
 * The API key a request carries, if any: `X-API-Key: <key>`, or `Authorization: Bearer <key>` whose
 * value starts as our keys do (a JWT never does, having no `plat_` prefix). X-API-Key wins when both
 * are sent. Null when the request carries no key (an access token, or nothing).
 */
function apiKeyOf(xApiKey: string, authorization: string): string | null {
  if (xApiKey !== '') return xApiKey;
  const bearer = BEARER_KEY.exec(authorization)?.[1];
  return bearer !== undefined && looksLikeApiKey(bearer) ? bearer : null;
}

/**
 * The caller of a request authenticated by an API key, or null when it carries none (the access
 * token branch then runs). A key acts for its tenant as the actor `apikey:<id>`, with no roles and
 * exactly its own permissions (api/runtime/permission-resolver.ts); a malformed, unknown, revoked or
 * expired key is 401 unauthorized.
 */
export async function apiKeyAuth(
  request: { path: string; get(header: string): string }, keys: VerifiedApiKeys,
): Promise<AuthState | null> {
  const secret = apiKeyOf(request.get('x-api-key'), request.get('authorization'));
  if (secret === null) return null;
  const key = await keys.verify(secret);
  if (PERSONAL.test(request.path)) {
    throw problems.forbidden('This route acts for a signed-in person; an API key cannot call it');
  }
  return { userId: apiKeyActorId(key.id), tenantId: key.tenantId, email: '', roles: [], apiKey: { id: key.id, permissions: key.permissions } };
}
