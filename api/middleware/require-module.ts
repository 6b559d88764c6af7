import { problems } from '../../common/problems';
import { authOf, type AppMiddleware } from '../context';
import type { RouteModule } from '../http/route-registry';
import type { InstalledModules } from '../runtime/installed-modules';
import { SLUG_PATTERN } from '../../services/modules/manifest';

/**
 * The gateway's "module installed" step (docs/reference/gateway.md#rule-5: token, tenant, module installed, permission,
 * ...): a route of a module answers 404 module-not-found unless the module is installed and active
 * for the caller's tenant, before authorization and before any downstream work. A route whose module
 * is a path parameter (`/data/:module/...`) names it with a function of the raw parameters; an
 * unknown or malformed name is simply not installed.
 */
export function requireModule(installed: InstalledModules, module: RouteModule): AppMiddleware {
  const slugOf = typeof module === 'function' ? module : () => module;
  return async (ctx, next) => {
    const slug = slugOf((ctx as unknown as { params?: Record<string, string> }).params ?? {});
    if (!(await installed.isActive(authOf(ctx).tenantId, slug))) {
      throw problems.moduleNotFound(SLUG_PATTERN.test(slug) ? slug : 'named in the path');
    }
    await next();
  };
}
