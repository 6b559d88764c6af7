import type { PermissionResolver } from '../access/permission-resolver';
import { authOf, type AppMiddleware } from '../context';
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
