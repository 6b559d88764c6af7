import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { createBillingActivities } from '../../activities/billing/subscription.activities';
import { createLogger } from '../../common/logger';
import { newId } from '../../common/ids';
import { createDbPool, type DatabasePool } from '../../db/pool';
import {
  changePlanUpdate, providerEventSignal, subscriptionStateQuery, subscriptionWorkflowId, tenantRecoveredSignal, type ProviderEvent,
} from '../../workflows/billing/billing.messages';
import { terminationWorkflowId } from '../../workflows/billing/termination.messages';
import { subscriptionLifecycle } from '../../workflows/billing/subscription.workflow';
import {
  billingEventsOf, billingTestBundle, capturedMail, lifecycleSettings, seedBillingTenant, subscriptionRowOf, type BillingTenant,
} from '../helpers/billing';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { waitFor } from '../helpers/http';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';

/**
 * The subscription lifecycle under the time-skipping server: the whole 37-day escalation with its
 * notices, payment at every stage, the downgrade grace rule, and continueAsNew per cycle. Real
 * activities against PostgreSQL (the mirror), notices captured at the mail activity.
 */
jest.setTimeout(120_000);

type Lifecycle = WorkflowHandleWithFirstExecutionRunId<typeof subscriptionLifecycle>;

let env: TestWorkflowEnvironment;
let owner: DatabasePool;
let app: DatabasePool;
let worker: Worker;
let running: Promise<void>;
const taskQueue = uniqueTaskQueue('billing');
const mail = capturedMail();

beforeAll(async () => {
  await migrateSharedDatabase();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 4, name: 'subscription-workflow-test' });
  app = await createDbPool(appUrl(), { maxPoolSize: 4, name: 'subscription-workflow-test-app' });
  env = await createTimeSkippingEnv();
  worker = await createTestWorker(env, {
    taskQueue,
    workflowBundle: await billingTestBundle(),
    activities: { ...createBillingActivities({ appPool: app, logger: createLogger('test', 'silent') }), ...mail.activities },
  });
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
  await owner?.end();
  await app?.end();
});

/** Starts the workflow and waits until it has loaded its subscription (its memo shows the status). */
async function start(tenant: BillingTenant): Promise<Lifecycle> {
  const handle = await env.client.workflow.start(subscriptionLifecycle, {
    taskQueue, workflowId: subscriptionWorkflowId(tenant.tenantId),
    args: [{ tenantId: tenant.tenantId, settings: lifecycleSettings(taskQueue) }],
  });
  await waitFor('the subscription to load', async () => (await handle.describe()).memo?.status !== undefined, 20_000, 50);
  return handle;
}

/** Lets the server's clock run on by `days` (time skipping), then lets the worker catch up. */
async function daysPass(days: number): Promise<void> {
  await env.sleep(days * 24 * 60 * 60 * 1000);
}

async function stateOf(handle: Lifecycle) {
  return handle.query(subscriptionStateQuery);
}

/**
 * Waits for a status in the workflow's memo (kept by the server, so reading it never waits for the
 * worker, unlike a query that can meet a run continuing as new) and in the mirror row.
 */
async function statusBecomes(handle: Lifecycle, tenant: BillingTenant, status: string): Promise<void> {
  await waitFor(`subscription ${status}`, async () => (await handle.describe()).memo?.status === status
    && (await subscriptionRowOf(owner, tenant.tenantId))?.status === status, 20_000, 50);
}

async function rowOf(tenant: BillingTenant) {
  return (await subscriptionRowOf(owner, tenant.tenantId))!;
}

function event(kind: ProviderEvent['kind'], extra: Partial<ProviderEvent> = {}): ProviderEvent {
  return { provider: 'stripe', eventId: `evt_${newId()}`, kind, ...extra };
}

describe('subscription workflow', () => {
  it('walks trial → past_due → suspended → terminated in 38 days with at least 5 notices before termination', async () => {
    const tenant = await seedBillingTenant(owner, { nowMs: await env.currentTimeMs() });
    const handle = await start(tenant);
    const firstRunId = handle.firstExecutionRunId;
    await statusBecomes(handle, tenant, 'trialing');

    // Three days before the 14-day trial ends: the notice.
    await daysPass(11.5);
    await waitFor('the trial notice', async () => mail.to(tenant.ownerEmail).length === 1, 20_000, 50);
    expect(mail.to(tenant.ownerEmail)[0].message).toMatchObject({ template: 'notice', data: { subject: 'Your trial ends soon' } });

    // Trial over without payment: past_due and the first dunning notice; the cycle continued as new.
    await daysPass(3);
    await statusBecomes(handle, tenant, 'past_due');
    const description = await handle.describe();
    expect(description.runId).not.toBe(firstRunId);

    await daysPass(7.5);
    await statusBecomes(handle, tenant, 'suspended');

    // Day 37 after going past_due (trial end + 37): still suspended; day 38: terminated.
    await daysPass(29);
    expect((await rowOf(tenant)).status).toBe('suspended');
    await daysPass(1.5);
    await statusBecomes(handle, tenant, 'terminated');

    const termination = await env.client.workflow.getHandle(terminationWorkflowId(tenant.tenantId)).describe();
    expect(termination.type).toBe('tenantTermination');
    expect(termination.status.name).toBe('RUNNING');

    await waitFor('the termination notice', async () => mail.to(tenant.ownerEmail).some((m) => m.message.template === 'notice'
      && m.message.data.subject.includes('terminated')), 20_000, 50);
    const subjects = mail.to(tenant.ownerEmail).map((m) => (m.message.data as { subject: string }).subject);
    const beforeTermination = subjects.slice(0, subjects.findIndex((s) => s.includes('terminated')));
    expect(beforeTermination.length).toBeGreaterThanOrEqual(5);
    expect(beforeTermination.filter((s) => s.includes('suspended')).length).toBeGreaterThanOrEqual(1);

    const statuses = (await billingEventsOf(owner, tenant.tenantId))
      .filter((e) => e.type === 'billing.subscription.changed').map((e) => e.data.status);
    expect(statuses).toEqual(['past_due', 'suspended', 'terminated']);

    // A payment for a terminated subscription changes nothing (docs/reference/billing.md#rule-26: terminated → active is refused).
    await handle.signal(providerEventSignal, event('payment_succeeded'));
    await daysPass(0.01);
    expect((await rowOf(tenant)).status).toBe('terminated');

    // The Platform Owner recovered the tenant: suspended, awaiting payment, the dunning clock restarted.
    await handle.signal(tenantRecoveredSignal);
    await statusBecomes(handle, tenant, 'suspended');
    expect((await stateOf(handle)).dunning).toMatchObject({ noticesSent: expect.any(Number) });
    await handle.signal(providerEventSignal, event('payment_succeeded'));
    await statusBecomes(handle, tenant, 'active');
  });

  it.each([
    ['trialing', 1],
    ['past_due', 16],
    ['suspended', 25],
    ['suspended, on the last day', 51.5],
  ])('a payment while %s makes it active with its data untouched and stops the escalation', async (_stage, days) => {
    const tenant = await seedBillingTenant(owner, { nowMs: await env.currentTimeMs() });
    const handle = await start(tenant);
    await statusBecomes(handle, tenant, 'trialing');
    await daysPass(days);
    expect((await rowOf(tenant)).status).not.toBe('terminated');

    await handle.signal(providerEventSignal, event('payment_succeeded'));
    await statusBecomes(handle, tenant, 'active');
    const after = await rowOf(tenant);
    expect(after.planId).toBe('starter');
    const noticesBefore = mail.to(tenant.ownerEmail).length;

    // Well past the termination day: still active, the period renewed (continued as new), no termination.
    await daysPass(45);
    const renewed = await rowOf(tenant);
    expect(renewed.status).toBe('active');
    expect(new Date(renewed.currentPeriodStart).getTime()).toBeGreaterThan(new Date(after.currentPeriodStart).getTime());
    expect((await handle.describe()).runId).not.toBe(handle.firstExecutionRunId);
    expect(mail.to(tenant.ownerEmail).length).toBe(noticesBefore);
    await expect(env.client.workflow.getHandle(terminationWorkflowId(tenant.tenantId)).describe()).rejects.toThrow();
  });

  it('a failed payment of an active subscription starts dunning with a notice at once', async () => {
    const tenant = await seedBillingTenant(owner, { nowMs: await env.currentTimeMs() });
    const handle = await start(tenant);
    await handle.signal(providerEventSignal, event('payment_succeeded'));
    await statusBecomes(handle, tenant, 'active');
    const sentBefore = mail.to(tenant.ownerEmail).length;

    const failed = event('payment_failed');
    await handle.signal(providerEventSignal, failed);
    await handle.signal(providerEventSignal, failed); // a redelivery is applied once
    await statusBecomes(handle, tenant, 'past_due');
    await waitFor('the dunning notice', async () => mail.to(tenant.ownerEmail).length === sentBefore + 1, 20_000, 50);
    expect((await rowOf(tenant)).version).toBe(3);
  });

  describe('downgrade', () => {
    async function activeTenant(extraMembers: number) {
      const tenant = await seedBillingTenant(owner, { extraMembers, nowMs: await env.currentTimeMs() });
      const handle = await start(tenant);
      await handle.signal(providerEventSignal, event('payment_succeeded'));
      await statusBecomes(handle, tenant, 'active');
      return { tenant, handle };
    }

    it('is pending until the next cycle, then applies; still over the new limits 30 days after it was asked for → past_due', async () => {
      // Three members; free allows two.
      const { tenant, handle } = await activeTenant(2);
      // Ten days into the cycle, so the cycle ends (day 30) well before the grace period does (day 40).
      await daysPass(10);
      const { version, currentPeriodEnd } = await rowOf(tenant);
      const changed = await handle.executeUpdate(changePlanUpdate, { args: [{ planId: 'free', version, kind: 'downgrade' }] });
      expect(changed).toMatchObject({
        planId: 'starter', version: version + 1,
        pendingChange: { planId: 'free', kind: 'downgrade', effectiveAt: currentPeriodEnd, requestedAt: expect.any(String) },
      });
      expect((await subscriptionRowOf(owner, tenant.tenantId))?.pendingChange).toMatchObject({ planId: 'free', kind: 'downgrade' });

      // The cycle ends within the grace period: the downgrade takes effect, the escalation waits.
      await daysPass((new Date(currentPeriodEnd).getTime() - await env.currentTimeMs()) / 86_400_000 + 1);
      expect(await rowOf(tenant)).toMatchObject({ planId: 'free', pendingChange: null, status: 'active' });

      await daysPass(10);
      await statusBecomes(handle, tenant, 'past_due');
      const planChanges = (await billingEventsOf(owner, tenant.tenantId)).filter((e) => e.type === 'billing.plan.changed').map((e) => e.data.change);
      expect(planChanges).toEqual(['downgrade_scheduled', 'downgrade_applied']);
    });

    it('within the new limits after 30 days stays active', async () => {
      const { tenant, handle } = await activeTenant(0);
      const { version } = await rowOf(tenant);
      await handle.executeUpdate(changePlanUpdate, { args: [{ planId: 'free', version, kind: 'downgrade' }] });
      await daysPass(31);
      expect(await rowOf(tenant)).toMatchObject({ planId: 'free', status: 'active' });
    });
  });
});
