import type { BillingStateDeps } from '../../../services/billing/state-deps';
import { readTerminationStatus, recoverTenant } from '../../../services/billing/termination';
import { authOf } from '../../context';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { tenantIdParams, terminationStatus, type TenantIdParams } from './admin.schemas';

/** A terminated tenant's deletion, and its recovery by the Platform Owner (docs/reference/billing.md#rule-28 and #rule-29). */
export function terminationAdminRoutes(deps: BillingStateDeps): AnyRoute[] {
  return [
    defineRoute<TenantIdParams>({
      namespace: 'billing', method: 'GET', path: '/admin/tenants/:id/termination-status', operationId: 'billing.admin.terminationStatus',
      summary: 'Where the deletion of a terminated tenant stands',
      description: 'Platform Owner only (403 otherwise). Phases deleting_records, deleting_files, completed; status in_progress, '
        + 'completed or recovered. 404 when the tenant was never terminated.',
      auth: 'bearer',
      schemas: { params: tenantIdParams, response: { 200: terminationStatus } },
      async handler(ctx) {
        ctx.body = await readTerminationStatus(deps, authOf(ctx), ctx.guard.params.id);
      },
    }),
    defineRoute<TenantIdParams>({
      namespace: 'billing', method: 'POST', path: '/admin/tenants/:id/recover', operationId: 'billing.admin.recoverTenant',
      summary: 'Stops a tenant’s termination and restores it',
      description: 'Platform Owner only (403 otherwise). Possible until the phase completed (then 409 conflict): the deletion '
        + 'stops, the tenant is restored and its subscription returns to suspended. Files already deleted are not restored.',
      auth: 'bearer',
      schemas: { params: tenantIdParams, response: { 200: terminationStatus } },
      async handler(ctx) {
        ctx.body = await recoverTenant(deps, authOf(ctx), ctx.guard.params.id);
      },
    }),
  ];
}
