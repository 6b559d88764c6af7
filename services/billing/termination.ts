import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { problems } from '../../common/problems';
import { selectTermination, type TerminationRecord } from '../../db/queries/billing/termination.queries';
import { isPlatformOwner } from '../../db/queries/identity/platform.queries';
import { withTenant } from '../../db/tenant';
import { recoverTenantUpdate, terminationWorkflowId } from '../../workflows/billing/termination.messages';
import type { AuthState } from '../../common/context';
import type { BillingStateDeps } from './state-deps';

/** Termination status and recovery are the Platform Owner's (docs/decisions/billing.md). */
async function requirePlatformOwner(deps: BillingStateDeps, auth: AuthState): Promise<void> {
  const allowed = !auth.impersonatorId && !auth.apiKey && await withTenant(deps.db, auth.tenantId, (tx) => isPlatformOwner(tx, auth.userId));
  if (!allowed) throw problems.forbidden('Only the Platform Owner can see or recover tenant terminations');
}

async function terminationOf(deps: BillingStateDeps, tenantId: string): Promise<TerminationRecord> {
  const termination = await withTenant(deps.db, tenantId, selectTermination);
  if (!termination) throw problems.notFound('termination');
  return termination;
}

/** GET /admin/tenants/:id/termination-status (docs/reference/billing.md#rule-28), from the workflow's read model. */
export async function readTerminationStatus(deps: BillingStateDeps, auth: AuthState, tenantId: string): Promise<TerminationRecord> {
  await requirePlatformOwner(deps, auth);
  return terminationOf(deps, tenantId);
}

/**
 * POST /admin/tenants/:id/recover: the recoverTenant update of `tenant-termination:<id>`, which
 * stops the deleting phase, restores the tenant and tells the subscription workflow; answered once
 * done. A termination that has completed (or was recovered already) is 409 conflict.
 */
export async function recoverTenant(deps: BillingStateDeps, auth: AuthState, tenantId: string): Promise<TerminationRecord> {
  await requirePlatformOwner(deps, auth);
  const termination = await terminationOf(deps, tenantId);
  if (termination.status !== 'in_progress') throw problems.conflict(`The termination is ${termination.status}; only one in progress can be recovered`);
  const temporal = deps.temporal();
  if (!temporal) throw problems.unavailable('The workflow service is not connected; try again shortly');
  try {
    await temporal.client.workflow.getHandle(terminationWorkflowId(tenantId)).executeUpdate(recoverTenantUpdate);
  } catch (error) {
    // The run ended between the read and the update, or its validator refused (completed meanwhile).
    if (error instanceof WorkflowNotFoundError) throw problems.conflict('The termination has already ended');
    if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) throw problems.conflict(error.cause.message);
    throw error;
  }
  return terminationOf(deps, tenantId);
}
