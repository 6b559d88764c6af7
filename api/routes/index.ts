import type { IdentityDeps } from '../identity/deps';
import type { AnyRoute } from './registry';
import { helloRoute } from './gateway/hello.routes';
import { authRoutes } from './identity/auth.routes';
import { securityRoutes } from './identity/security.routes';
import { userCreateRoutes } from './identity/user-create.routes';

/** The services route factories are given (built by the gateway runtime). */
export interface RouteServices {
  identity: IdentityDeps;
}

/**
 * Every route of the gateway. A domain adds its routes here (a list, or a factory given the
 * services it needs); the router and the OpenAPI documents are both built from this list.
 */
export function platformRoutes(services: RouteServices): AnyRoute[] {
  return [
    helloRoute, ...authRoutes(services.identity),
    ...securityRoutes(services.identity),
    ...userCreateRoutes(services.identity),
  ];
}
