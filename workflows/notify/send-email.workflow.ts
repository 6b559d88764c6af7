import { proxyActivities } from '@temporalio/workflow';
import type { DeliverEmailInput, NotifyActivities } from '../../activities/notify/mail.activities';

export type SendEmailInput = DeliverEmailInput;

/**
 * SMTP outages are retried with backoff up to 10 minutes apart for three days (the longest lifetime
 * of a link a mail carries: an invitation), so a mail server that is down for a while delays mail
 * and loses none. A message the server refuses outright (mail-rejected) is not retried.
 */
const notify = proxyActivities<NotifyActivities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '72 hours',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes', nonRetryableErrorTypes: ['mail-rejected'] },
});

/**
 * One e-mail, started by the gateway with the workflow id `notify.email:<idempotencyKey>` (see
 * services/notify/mailer.ts), so a repeated start never sends it twice.
 */
export async function sendEmail(input: SendEmailInput): Promise<void> {
  await notify.deliverEmail(input);
}
