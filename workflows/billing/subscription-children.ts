import { ParentClosePolicy, startChild, workflowInfo } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { sendEmail } from '../notify/send-email.workflow';
import type { Notice } from './notices';
import { terminationWorkflowId } from './termination.messages';

// The child workflows the subscription workflow starts: its notices and the tenant's termination.

/**
 * Mails a billing notice to each of a tenant's owners through the mail workflow (sendEmail on the
 * notify task queue), one child per address, started under the notice's key so a notice is never
 * sent twice to one address; the children outlive the subscription workflow's run (ABANDON).
 */
export async function mailNotice(tenantId: string, recipients: string[], taskQueue: string, notice: Notice): Promise<void> {
  for (const to of recipients) {
    const idempotencyKey = `billing:${tenantId}:${notice.key}:${to}`;
    try {
      await startChild<typeof sendEmail>('sendEmail', {
        workflowId: `notify.email:${idempotencyKey}`,
        taskQueue,
        args: [{ message: { to, template: 'notice', data: { subject: notice.subject, text: notice.text } }, idempotencyKey }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      // Sent before (a notice is never sent twice under one key).
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}

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
