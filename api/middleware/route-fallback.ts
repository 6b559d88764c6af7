import type { Layer } from '@koa/router';
import { problems } from '../../common/problems';
import type { AppMiddleware, AppState } from '../context';
import { mostSpecific } from '../http/route-patterns';

/**
 * Runs only when no route answered. A path that some route serves under other methods is a 405
 * with `Allow` (OPTIONS on it answers 204 with the same header); any other path is a 404. Both
 * leave as problems, so they have the same shape as every other error. `Allow` names the methods of
 * the pattern that applies to the path, the most specific of those matching it (api/http/route-patterns.ts):
 * `/wallets/transfer` is POST only, although `/wallets/:id` (GET) matches it too.
 */
export function routeFallback(matching: (path: string) => Layer<AppState>[]): AppMiddleware {
  return (ctx) => {
    const routes = matching(ctx.path).filter((layer) => layer.methods.length > 0);
    const allowed = [...new Set(mostSpecific(routes, (layer) => String(layer.path)).flatMap((layer) => layer.methods))];
    if (allowed.length === 0) throw problems.routeNotFound(ctx.path);
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', [...allowed, 'OPTIONS'].join(', '));
      ctx.status = 204;
      return;
    }
    throw problems.methodNotAllowed(ctx.method, allowed);
  };
}
