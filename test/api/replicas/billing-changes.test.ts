import type { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { createBillingActivities } from '../../../activities/billing/subscription.activities';
import { createLogger } from '../../../common/logger';
import { newId } from '../../../common/ids';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { capturedMail, stripeSignature } from '../../helpers/billing';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { call, waitFor, type JsonResponse } from '../../helpers/http';
import { get, registerAccount } from '../../helpers/identity';
import { balanceOf, credit, moneyAccount } from '../../helpers/money';
import type { TestGateway } from '../../helpers/app';
import { EnforcementDelays, startReplicas, untilFollowing, type Replicas } from '../../helpers/replicas';
import { connectDevServer, createTestWorker, terminateRunningOn, uniqueTaskQueue, type DevServer } from '../../helpers/temporal';
import { send } from '../../helpers/users';

/**
 * Billing changes bind gateway B within 1 s of their commit: B's plan cache (api/runtime/plan-cache.ts)
 * holds the tenant's plan and status when the change commits, and only billing.plan.changed /
 * billing.subscription.changed (outbox → the platform's relay → Kafka → B's consumer) can drop it:
 * the cache's TTL is 15 minutes. The money routes' plan limits (services/money/plan-limits.ts, kept 5
 * minutes) follow the same events. The subscription workflows run on a worker of this file's own.
 *
 * The platform has no "tenant suspended" answer of its own (no 423): a tenant is suspended by its
 * subscription (docs/decisions/billing.md: past_due, then suspended after BILLING_SUSPEND_AFTER_DAYS unpaid),
 * after which mutating requests are 402 subscription-suspended (services/billing/limits.ts). No
 * route suspends a tenant directly; gateway A receives the provider's failed payment, and with
 * BILLING_SUSPEND_AFTER_DAYS=0 in the lifecycle A hands the workflow, the workflow suspends at once.
 */
jest.setTimeout(90_000);

let replicas: Replicas;
let owner: DatabasePool;
let app: DatabasePool;
let server: DevServer;
let worker: { instance: Worker; running: Promise<void> };
const taskQueue = uniqueTaskQueue('replicas-billing');
const mail = capturedMail();
const delays = new EnforcementDelays();

beforeAll(async () => {
  await migrateSharedDatabase();
  [owner, app, server] = await Promise.all([
    createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'replicas-billing-owner' }),
    createDbPool(appUrl(), { maxPoolSize: 4, name: 'replicas-billing-app' }),
    connectDevServer(),
  ]);
  const deps = { appPool: app, fleetPool: owner, logger: createLogger('test', 'silent') };
  const instance = await createTestWorker(server, { taskQueue, activities: { ...createBillingActivities(deps), ...mail.activities } });
  worker = { instance, running: instance.run() };
  replicas = await startReplicas({ BILLING_TASK_QUEUE: taskQueue, NOTIFY_TASK_QUEUE: taskQueue }, { a: { BILLING_SUSPEND_AFTER_DAYS: '0' } });
  await Promise.all([untilFollowing(replicas.a), untilFollowing(replicas.b)]);
});

afterAll(async () => {
  delays.print('Billing changes, enforced by gateway B');
  await replicas?.close();
  worker?.instance.shutdown();
  await worker?.running;
  if (server) {
    await terminateRunningOn(server.client, taskQueue);
    await server.close();
  }
  await Promise.all([owner?.end(), app?.end()]);
});

/** How often B's Kafka consumer dropped the tenant's plan (nothing else calls it on B: the changes are made elsewhere). */
function droppedPlans(gateway: TestGateway, tenantId: string): () => number {
  const dropped = jest.spyOn(gateway.runtime.gateway.limits!.cache, 'invalidateTenant');
  return () => dropped.mock.calls.filter(([id]) => id === tenantId).length;
}

const newUser = () => ({ email: `replica.${newId()}@example.test`, firstName: 'Rita', lastName: 'Replica' });
const statusOf = (tenantId: string) =>
  owner.oneFirst(sql.type(z.object({ status: z.string() }))`SELECT status FROM subscriptions WHERE tenant_id = ${tenantId}`);

describe('a billing change', () => {
  it('a downgrade made through gateway A: gateway B, which let a creation through, refuses the next one over the new plan\'s limit within 1 s', async () => {
    const { a, b } = replicas;
    const tenant = await registerAccount(a);
    const dropped = droppedPlans(b, tenant.tenant.id);
    // Trialing on starter (5 users): B lets the second user in, from its cache afterwards.
    expect((await send(b, 'POST', '/users', tenant.accessToken, newUser())).status).toBe(201);
    expect(b.runtime.gateway.limits!.cache.isCached(tenant.tenant.id)).toBe(true);
    // An empty body passes the plan step (the step before validation) and is refused by validation: nothing is created.
    const probe = () => send(b, 'POST', '/users', tenant.accessToken, {});
    expect((await probe()).status).toBe(400);

    const { body: subscription } = await send<{ id: string; version: number }>(a, 'GET', '/billing/subscriptions', tenant.accessToken);
    const changed = await send(a, 'PATCH', `/billing/subscriptions/${subscription.id}`, tenant.accessToken, { planId: 'free', version: subscription.version });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ pendingChange: { planId: 'free', kind: 'downgrade' } });
    await delays.measure('plan downgraded (402 plan-limit-exceeded)', Date.now(), probe,
      (answer) => answer.status === 402 && answer.body.type === b.problemType('plan-limit-exceeded'));
    const refused = await send(b, 'POST', '/users', tenant.accessToken, newUser());
    expect(refused.status).toBe(402);
    expect(refused.body.limit).toEqual({ resource: 'users', allowed: 2, current: 2, planId: 'free' });
    expect(dropped()).toBeGreaterThan(0);
  });

  it('an upgrade made through gateway A: gateway B, which refused a credit over the old plan\'s maxTxAmount, lets it through within 1 s', async () => {
    const { a, b } = replicas;
    const account = await moneyAccount(a, owner);
    // A plan of this test's own: starter's limits with a small maxTxAmount (the catalogue's plans all allow 10 000 000).
    const tight = `replicas-tight-${newId().slice(-12)}`;
    await owner.query(sql.unsafe`
      INSERT INTO plans (id, name, price, limits)
      SELECT ${tight}, 'Replicas test', 0, limits || ${sql.jsonb({ maxTxAmount: 1000 })} FROM plans WHERE id = 'starter'`);
    expect((await send(a, 'POST', '/billing/subscriptions', account.accessToken, { planId: tight })).body).toMatchObject({ planId: tight });
    // Refusals store nothing under the key: the same request is evaluated again each time.
    const key = newId();
    const refused = await credit(b, account, 5000, key);
    expect(refused.status).toBe(402);
    expect(refused.body.limit).toEqual({ resource: 'maxTxAmount', allowed: 1000, current: 5000, planId: tight });

    const { body: subscription } = await send<{ id: string; version: number }>(a, 'GET', '/billing/subscriptions', account.accessToken);
    const changed = await send(a, 'PATCH', `/billing/subscriptions/${subscription.id}`, account.accessToken, { planId: 'pro', version: subscription.version });
    expect(changed.body).toMatchObject({ planId: 'pro', pendingChange: null });
    await delays.measure('plan upgraded (credit over the old maxTxAmount 200)', Date.now(), () => credit(b, account, 5000, key),
      (answer) => answer.status === 200);
    expect(await balanceOf(b, account)).toEqual({ available: 5000, pending: 0, frozen: 0 });
  });

  it('a suspension after a failed payment received by gateway A: gateway B refuses mutations with 402 subscription-suspended within 1 s of its commit', async () => {
    const { a, b } = replicas;
    const tenant = await registerAccount(a);
    const dropped = droppedPlans(b, tenant.tenant.id);
    const probe = () => send(b, 'POST', '/roles', tenant.accessToken, {});
    expect((await probe()).status).toBe(400);
    expect(b.runtime.gateway.limits!.cache.isCached(tenant.tenant.id)).toBe(true);

    const failed = JSON.stringify({
      id: `evt_${newId()}`, object: 'event', type: 'invoice.payment_failed',
      data: { object: { object: 'invoice', metadata: { tenantId: tenant.tenant.id } } },
    });
    const received: JsonResponse = await call(`${a.baseUrl}/v1/billing/webhooks/stripe`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(failed) }, body: failed,
    });
    expect(received.status).toBe(200);
    // The workflow moves past_due → suspended at once (0 days); the 1 s counts from that commit.
    await waitFor('the subscription to be suspended', async () => (await statusOf(tenant.tenant.id)) === 'suspended', 30_000, 10);
    await delays.measure('subscription suspended (402 subscription-suspended)', Date.now(), probe,
      (answer) => answer.status === 402 && answer.body.type === b.problemType('subscription-suspended'));
    // Suspended, not terminated: reads still pass.
    expect((await get(b, '/roles', tenant.accessToken)).status).toBe(200);
    expect(dropped()).toBeGreaterThan(0);
  });
});
