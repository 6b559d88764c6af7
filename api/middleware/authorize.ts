import type { PermissionResolver } from '../runtime/permission-resolver';
import { authOf, type AppMiddleware } from '../context';
import type { AuthState } from '../../common/context';
import { ADMIN_ROLE_NAMES } from '../../services/access/permissions';
import { problems } from '../../common/problems';

/** Put after authentication on routes that declare a permission: 403 `forbidden` unless a role grants it. */
export function authorize(resolver: PermissionResolver, permission: string): AppMiddleware {
  return async (ctx, next) => {
    await requirePermission(resolver, authOf(ctx), permission);
    await next();
  };
}

/** The same check, for a route whose permission depends on what it is asked for (GET /jobs/:jobId: the job's kind). */
export async function requirePermission(resolver: PermissionResolver, auth: AuthState, permission: string): Promise<void> {
  if (!(await resolver.allows(auth, permission))) throw problems.forbidden(`The permission ${permission} is required`);
}

/** For routes docs/reference/gateway.md#rule-22 reserves to "the admin role" rather than a permission (/health). */
export function requireAdminRole(): AppMiddleware {
  return async (ctx, next) => {
    if (!authOf(ctx).roles.some((role) => ADMIN_ROLE_NAMES.has(role))) throw problems.forbidden('The admin role is required');
    await next();
  };
}
