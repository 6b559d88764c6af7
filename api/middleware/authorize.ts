import type { PermissionResolver } from '../runtime/permission-resolver';
import { authOf, type AppMiddleware } from '../context';
import { ADMIN_ROLE_NAMES } from '../../services/access/permissions';
import { problems } from '../../common/problems';

/** Put after authentication on routes that declare a permission: 403 `forbidden` unless a role grants it. */
export function authorize(resolver: PermissionResolver, permission: string): AppMiddleware {
  return async (ctx, next) => {
    if (!(await resolver.allows(authOf(ctx), permission))) {
      throw problems.forbidden(`The permission ${permission} is required`);
    }
    return next();
  };
}

/** For routes document 1 reserves to "the admin role" rather than a permission (/health). */
export function requireAdminRole(): AppMiddleware {
  return async (ctx, next) => {
    if (!authOf(ctx).roles.some((role) => ADMIN_ROLE_NAMES.has(role))) throw problems.forbidden('The admin role is required');
    return next();
  };
}
