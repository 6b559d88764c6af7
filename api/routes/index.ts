import type { IdentityDeps } from '../identity/deps';
import type { AuditExportDeps } from '../audit/export/deps';
import { auditExportRoutes } from './audit/export.routes';
import type { AnyRoute } from './registry';
import { helloRoute } from './gateway/hello.routes';
import { authRoutes } from './identity/auth.routes';

/** The services route factories are given (built by the gateway runtime). */
export interface RouteServices {
  identity: IdentityDeps;
  auditExport: AuditExportDeps;
}

/**
 * Every route of the gateway. A domain adds its routes here (a list, or a factory given the
 * services it needs); the router and the OpenAPI documents are both built from this list.
 */
export function platformRoutes(services: RouteServices): AnyRoute[] {
  return [helloRoute, ...authRoutes(services.identity), ...auditExportRoutes(services.auditExport)];
}
