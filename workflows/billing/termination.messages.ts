import { defineQuery, defineUpdate } from '@temporalio/workflow';

/**
 * Messages of the tenant termination workflow, shared by the workflow, the gateway's recovery route
 * and the subscription workflow. Definitions only: importing this file pulls in no workflow code.
 */

/**
 * Where a termination stands. The contract states these itself instead of naming the read model's types:
 * a workflow imports nothing of db/ (docs/decisions/layout.md, Workflow contracts), and the
 * activity that records a phase (activities/billing/termination.activities.ts) takes the table's type,
 * so a phase this list has and the table lacks does not compile.
 */
export type TerminationPhase = 'deleting_records' | 'deleting_files' | 'completed';
export type TerminationStatus = 'in_progress' | 'completed' | 'recovered';

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

