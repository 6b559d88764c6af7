import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';
import type { EmailMessage } from './templates';
import type { sendEmail } from '../../workflows/notify/send-email.workflow';
import type { TemporalHandle } from '../../common/temporal/client';
import { tenantSearchAttributes } from '../../common/temporal/search-attributes';

/**
 * What a feature calls to send an e-mail. The mail goes out from the sendEmail workflow (activity
 * deliverEmail, retried while SMTP is down), so it survives a mail outage and a gateway restart once
 * send() has returned. The idempotency key is a business key (`verify-email:<token id>`): the
 * workflow id is derived from it and ids are never reused, so a repeated send() of one key (a retried
 * request, a retried start) is one mail.
 */
export class Mailer {
  constructor(
    /** The gateway's handle, or the worker's client (which connects natively): only the client is used. */
    private readonly temporal: () => Pick<TemporalHandle, 'client'> | undefined,
    private readonly taskQueue: string,
    /** How long a send waits for the gateway's Temporal connection (the downstream deadline). */
    private readonly connectWaitMs: number,
    private readonly logger: Logger,
  ) {}

  /**
   * `tenantId` is the tenant the mail concerns, its TenantId search attribute (common/temporal/search-attributes.ts):
   * the mail workflow's input names none, and many senders' request contexts do not either (a
   * registration, a password reset, a lock alert), so every sender passes it.
   */
  async send(message: EmailMessage, idempotencyKey: string, tenantId?: string): Promise<void> {
    const handle = await this.connected();
    const typedSearchAttributes = tenantSearchAttributes(tenantId);
    try {
      await handle.client.workflow.start<typeof sendEmail>('sendEmail', {
        taskQueue: this.taskQueue,
        workflowId: `notify.email:${idempotencyKey}`,
        args: [{ message, idempotencyKey }],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowIdConflictPolicy: 'USE_EXISTING',
        ...(typedSearchAttributes && { typedSearchAttributes }),
      });
    } catch (error) {
      // The mail was handed over before (and has finished): nothing more to do.
      if (error instanceof WorkflowExecutionAlreadyStartedError) return;
      throw error;
    }
    this.logger.debug({ template: message.template, idempotencyKey }, 'e-mail queued');
  }

  /**
   * The gateway connects to Temporal in the background at start-up; a mail requested in the first
   * moments waits for that connection (up to the downstream deadline) rather than failing a
   * registration that arrived a little early. Later the handle is simply there.
   */
  private async connected(): Promise<Pick<TemporalHandle, 'client'>> {
    const deadline = Date.now() + this.connectWaitMs;
    for (let handle = this.temporal(); ; handle = this.temporal()) {
      if (handle) return handle;
      if (Date.now() >= deadline) throw problems.unavailable('Mail delivery is not available yet; try again shortly');
      await sleep(50);
    }
  }
}
