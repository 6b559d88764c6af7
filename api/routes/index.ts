import type { AnyRoute } from './registry';
import { helloRoute } from './gateway/hello.routes';

/**
 * Every route of the gateway. A domain adds its routes here (a list, or a factory given the
 * services it needs); the router and the OpenAPI documents are both built from this list.
 */
export function platformRoutes(): AnyRoute[] {
  return [helloRoute];
}
