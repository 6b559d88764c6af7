import { ParentClosePolicy, startChild, workflowInfo } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { terminationWorkflowId } from './termination.messages';

// The tenant's termination, a child workflow of the subscription workflow (its notices are children
// too: workflows/notify/mail-notice.ts).

/**
 * Starts the tenant's termination (soft delete over 24-48 h) on this workflow's task queue; it
 * outlives the subscription workflow's runs (ABANDON), and one already started is left running.
 */
export async function startTermination(tenantId: string): Promise<void> {
  try {
    await startChild('tenantTermination', {
      workflowId: terminationWorkflowId(tenantId),
      taskQueue: workflowInfo().taskQueue,
      args: [{ tenantId }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
