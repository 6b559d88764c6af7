import { createWebhookRedeliveryActivities } from '../../../activities/billing/webhook-redelivery.activities';
import { newId } from '../../../common/ids';
import type { DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { startBillingStack, type BillingStack } from '../../helpers/billing-stack';
import { capturedMail } from '../../helpers/billing';
import { forgetDelivery, metricValue, postStripe, runRedelivery, stripeEvent, stripeReceipt } from '../../helpers/billing-webhooks';
import { call, waitFor } from '../../helpers/http';
import { registerAccount, type RegisteredAccount } from '../../helpers/identity';
import type { DevServer } from '../../helpers/temporal';
import { send } from '../../helpers/users';
import { subscriptionWorkflowId } from '../../../workflows/billing/billing.messages';
import { ensureSchedule, webhookRedeliverySchedule } from '../../../workers/schedules';

/**
 * Issue 5, Performance: a webhook is answered once its receipt has committed, and the receipt is
 * delivered to the tenant's subscription workflow afterwards: by the receiving gateway right away, or
 * by the redelivery sweep when that failed. Delivery is at least once; the workflow applies an event
 * id once. Through the real gateway, PostgreSQL and the Temporal dev server (this test's worker).
 */
jest.setTimeout(90_000);

let stack: BillingStack;
let gateway: TestGateway;
let owner: DatabasePool;
let server: DevServer;
let taskQueue: string;

beforeAll(async () => {
  stack = await startBillingStack('billing-webhooks', (deps) => ({
    ...createWebhookRedeliveryActivities(deps),
    ...capturedMail().activities,
  }));
  ({ gateway, owner, server, taskQueue } = stack);
});

afterAll(() => stack?.close());

interface Subscription {
  status: string;
  planId: string;
  version: number;
}

const subscriptionOf = async (account: RegisteredAccount) =>
  (await send<Subscription>(gateway, 'GET', '/billing/subscriptions', account.accessToken)).body;

const becomes = (account: RegisteredAccount, what: string, met: (s: Subscription) => boolean) =>
  waitFor(`subscription ${what}`, async () => met(await subscriptionOf(account)), 30_000, 50);

const delivered = (eventId: string) =>
  waitFor(`receipt ${eventId} marked delivered`, async () => (await stripeReceipt(owner, eventId))?.deliveredAt != null, 30_000, 50);

async function metrics(baseUrl: string): Promise<string> {
  return (await call(`${baseUrl}/metrics`)).body as unknown as string;
}

describe('webhook delivery after the answer', () => {
  it('records the receipt with its event and trace, answers 200, and the workflow applies it: paid → active, failed → past_due', async () => {
    const account = await registerAccount(gateway);
    const paid = stripeEvent('invoice.paid', account.tenant.id);
    const answer = await postStripe(gateway.baseUrl, paid.body);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ received: true, duplicate: false, handled: true });

    const receipt = await stripeReceipt(owner, paid.id);
    expect(receipt).toMatchObject({ eventType: 'invoice.paid', event: { provider: 'stripe', eventId: paid.id, kind: 'payment_succeeded' } });
    // The request's trace (traceparent 00-<trace id>-<span id>-01) is the receipt's, for a late delivery's log lines.
    expect(receipt?.traceId).toBe(answer.headers.get('traceparent')?.split('-')[1]);
    await becomes(account, 'active', (s) => s.status === 'active');
    await delivered(paid.id);

    const failed = stripeEvent('invoice.payment_failed', account.tenant.id);
    expect((await postStripe(gateway.baseUrl, failed.body)).status).toBe(200);
    await becomes(account, 'past_due', (s) => s.status === 'past_due');
    await delivered(failed.id);
    expect((await subscriptionOf(account)).version).toBe(3);

    // A provider retry of a delivered event is acknowledged and not recorded again.
    expect((await postStripe(gateway.baseUrl, paid.body)).body).toEqual({ received: true, duplicate: true, handled: false });
    expect(metricValue(await metrics(gateway.baseUrl), 'billing_webhook_dispatch_total{outcome="delivered"}')).toBeGreaterThanOrEqual(2);
  });

  it('delivers a receipt whose gateway could not reach Temporal by the redelivery Schedule', async () => {
    const account = await registerAccount(gateway);
    // A gateway whose Temporal client points at a closed port: it records and answers, but cannot signal.
    // Its deadline (which bounds the failed signal too) leaves the answer room on a busy machine.
    const cutOff = await startTestGateway({
      env: { BILLING_TASK_QUEUE: taskQueue, NOTIFY_TASK_QUEUE: taskQueue, TEMPORAL_ADDRESS: '127.0.0.1:1', GRPC_CALL_TIMEOUT_MS: '5000' },
    });
    try {
      const paid = stripeEvent('invoice.paid', account.tenant.id);
      const answer = await postStripe(cutOff.baseUrl, paid.body);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ received: true, duplicate: false, handled: true });

      await waitFor('the failed dispatch', async () =>
        metricValue(await metrics(cutOff.baseUrl), 'billing_webhook_dispatch_total{outcome="failed"}') === 1, 30_000, 50);
      expect((await stripeReceipt(owner, paid.id))?.deliveredAt).toBeNull();
      expect((await subscriptionOf(account)).status).toBe('trialing');
      const scrape = await metrics(cutOff.baseUrl);
      expect(metricValue(scrape, 'billing_webhook_undelivered_events')).toBeGreaterThanOrEqual(1);
      expect(metricValue(scrape, 'billing_webhook_oldest_undelivered_seconds')).toBeGreaterThan(0);

      // The redelivery Schedule as the worker creates it, here every second on this test's queue.
      const schedule = webhookRedeliverySchedule({
        cfg: { ...gateway.config, billing: { ...gateway.config.billing, webhookRedeliveryIntervalSec: 1 } },
        scheduleId: `billing.webhook-redelivery-test:${newId()}`, taskQueue,
      });
      await ensureSchedule(server.client, schedule);
      try {
        await delivered(paid.id);
        await becomes(account, 'active', (s) => s.status === 'active');
      } finally {
        await server.client.schedule.getHandle(schedule.scheduleId).delete();
      }
    } finally {
      await cutOff.close();
    }
  });

  it('applies an event delivered twice once', async () => {
    const account = await registerAccount(gateway);
    const paid = stripeEvent('invoice.paid', account.tenant.id);
    await postStripe(gateway.baseUrl, paid.body);
    await becomes(account, 'active', (s) => s.status === 'active');
    await delivered(paid.id);
    const failed = stripeEvent('invoice.payment_failed', account.tenant.id);
    await postStripe(gateway.baseUrl, failed.body);
    await becomes(account, 'past_due', (s) => s.status === 'past_due' && s.version === 3);

    // The payment's marker is lost: the sweep delivers it again. Applied twice, it would reactivate.
    await forgetDelivery(owner, paid.id);
    expect(await runRedelivery(server.client, taskQueue, gateway.config)).toBeGreaterThanOrEqual(1);
    // The workflow takes signals in order: once this later event is applied, the redelivered one was seen.
    const updated = stripeEvent('customer.subscription.updated', account.tenant.id, { object: 'subscription', metadata: { tenantId: account.tenant.id, planId: 'pro' } });
    await postStripe(gateway.baseUrl, updated.body);
    await becomes(account, 'on pro', (s) => s.planId === 'pro');
    expect(await subscriptionOf(account)).toMatchObject({ status: 'past_due', planId: 'pro', version: 4 });
  });

  it('does not let a late second delivery of a payment revive a subscription canceled after it', async () => {
    const account = await registerAccount(gateway);
    const paid = stripeEvent('invoice.paid', account.tenant.id);
    await postStripe(gateway.baseUrl, paid.body);
    await becomes(account, 'active', (s) => s.status === 'active');
    await delivered(paid.id);
    const canceled = stripeEvent('customer.subscription.deleted', account.tenant.id, { object: 'subscription' });
    await postStripe(gateway.baseUrl, canceled.body);
    await becomes(account, 'canceled', (s) => s.status === 'canceled');
    const handle = server.client.workflow.getHandle(subscriptionWorkflowId(account.tenant.id));
    await waitFor('the canceled run to end', async () => (await handle.describe()).status.name === 'COMPLETED', 30_000, 50);

    // The payment's marker is lost: the canceled run has ended, so a signal would start a new one that
    // knows no applied event ids. The sweep marks it instead of signalling it.
    await forgetDelivery(owner, paid.id);
    await runRedelivery(server.client, taskQueue, gateway.config);
    expect((await stripeReceipt(owner, paid.id))?.deliveredAt).not.toBeNull();
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    expect(await subscriptionOf(account)).toMatchObject({ status: 'canceled' });
  });
});
