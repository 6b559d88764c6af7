import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { sendEmail } from './send-email.workflow';

/** A `notice` mail (services/notify/templates.ts): a subject and paragraphs of plain text. */
export interface NoticeText {
  subject: string;
  text: string;
}

/**
 * Mails a notice from a workflow to each recipient through the mail workflow (sendEmail on the notify
 * task queue), one child per address under the idempotency key `<occasion>:<address>`, so a notice
 * is never sent twice to one address however often the workflow asks; the children outlive the
 * sender's run (ABANDON). `occasion` names the sender and the occasion (`billing:<tenantId>:<key>`).
 */
export async function mailNotice(occasion: string, recipients: readonly string[], taskQueue: string, notice: NoticeText): Promise<void> {
  for (const to of recipients) {
    const idempotencyKey = `${occasion}:${to}`;
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
