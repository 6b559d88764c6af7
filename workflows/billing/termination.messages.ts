import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { TerminationPhase, TerminationStatus } from '../../db/queries/billing/termination.queries';

/**
 * Messages of the tenant termination workflow, shared by the workflow, the gateway's recovery route
 * and the subscription workflow. Definitions only: importing this file pulls in no workflow code.
 */

export interface TenantTerminationInput {
  tenantId: string;
}

export interface TerminationState {
  tenantId: string;
  status: TerminationStatus;
  phase: TerminationPhase;
  startedAt: string;
}

/** The Platform Owner's recovery (POST /admin/tenants/:id/recover); refused once completed. */
export const recoverTenantUpdate = defineUpdate<TerminationState>('recoverTenant');
export const terminationStateQuery = defineQuery<TerminationState>('terminationState');

export const terminationWorkflowId = (tenantId: string): string => `tenant-termination:${tenantId}`;
/** The failure type of a recovery that came too late. */
export const TERMINATION_COMPLETED = 'TerminationCompleted';

