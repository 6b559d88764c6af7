import { proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities } from '../../activities/events/webhooks.activities';
import { mailNotice } from '../notify/mail-notice';
import { endpointDisabledNotice } from './notices';
import {
  WEBHOOK_RETRY_DELAYS_MS, type WebhookDeliveryInput, type WebhookDeliveryResult,
} from './webhooks.messages';

/**
 * An attempt is one request of at most 15 s and a few statements. A failure of the activity itself
 * (the database or the worker away, never the receiver's answer, which is a result) is retried
 * 1 s doubling to 1 min apart and never given up on: the delivery resumes at its attempt once they
 * are back, and the receiver may see that attempt twice, under the same webhook-id.
 */
const steps = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * One event to one endpoint (issue 35; docs/decisions/events.md, Outbound webhooks), under the
 * workflow id `webhook.delivery:<tenantId>:<endpointId>:<eventId>`. Up to eight attempts, each
 * signed afresh under the same webhook-id (the event id), with durable timers of 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h and 10 h between them; a 2xx answer ends it. After the last failure the
 * event is dead-lettered under `webhooks.<endpointId>`. An endpoint deleted meanwhile ends the
 * delivery quietly; one turned off is dead-lettered at once. The failure that turns the endpoint off
 * (5 days of failures) also mails the tenant's owners, once per turning off.
 *
 * A `webhook.test` delivery (no source on the bus) is tried once and never dead-lettered.
 */
export async function webhookDelivery(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  const { tenantId, endpointId, envelope, source } = input;
  const delays = source === null ? [] : WEBHOOK_RETRY_DELAYS_MS;
  let responseStatus: number | null = null;
  for (let attempt = 1; ; attempt += 1) {
    const delay = delays[attempt - 1] as number | undefined;
    // Workflow time: the same on replay, and the time-skipping server's in tests.
    const now = Date.now();
    const result = await steps.attemptWebhook({
      tenantId, endpointId, envelope, attempt,
      attemptedAt: new Date(now).toISOString(),
      nextAttemptAt: delay === undefined ? null : new Date(now + delay).toISOString(),
      evenIfDisabled: source === null,
    });
    if (result.outcome === 'delivered') return { status: 'delivered', attempts: attempt, responseStatus: result.responseStatus };
    if (result.outcome === 'endpoint-gone') return { status: 'endpoint-gone', attempts: attempt - 1, responseStatus };
    const failed = result.outcome === 'failed' ? result : null;
    const made = failed ? attempt : attempt - 1;
    const disabledNow = failed?.disabledNow === true;
    if (failed) responseStatus = failed.responseStatus;
    const lastError = failed?.error ?? 'the endpoint is turned off';
    if (failed && disabledNow) {
      const recipients = await steps.webhookOwnerEmails(tenantId);
      await mailNotice(`webhooks:${tenantId}:${endpointId}:disabled:${now}`, recipients, input.notifyTaskQueue, endpointDisabledNotice(endpointId, failed.url));
    }
    const stop = delay === undefined || result.outcome === 'endpoint-disabled' || disabledNow;
    if (stop) {
      if (source === null) return { status: 'failed', attempts: made, responseStatus };
      await steps.deadLetterWebhook({ tenantId, endpointId, envelope, source, attempts: Math.max(made, 1), lastError });
      return { status: 'dead-lettered', attempts: made, responseStatus };
    }
    await sleep(delay);
  }
}
