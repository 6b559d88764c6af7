import { newId } from '../../../common/ids';
import type { DatabasePool } from '../../../db/pool';
import { subscriptionWorkflowId } from '../../../workflows/billing/billing.messages';
import type { TestGateway } from '../../helpers/app';
import { startBillingStack, type BillingStack } from '../../helpers/billing-stack';
import { billingEventsOf, capturedMail, paddleSignature, stripeSignature } from '../../helpers/billing';
import { call, waitFor, type JsonResponse } from '../../helpers/http';
import { registerAccount, type RegisteredAccount } from '../../helpers/identity';
import type { DevServer } from '../../helpers/temporal';
import { createMember, login, send } from '../../helpers/users';

/**
 * Billing (docs/reference/billing.md) through the real gateway: plans, the subscription every registration starts
 * (a workflow on the dev server, served by this test's worker on a queue of its own), plan changes
 * with their conflicts, and provider webhooks with their signatures.
 */
jest.setTimeout(60_000);

let stack: BillingStack;
let gateway: TestGateway;
let owner: DatabasePool;
let server: DevServer;
let taskQueue: string;
const mail = capturedMail();

beforeAll(async () => {
  stack = await startBillingStack('billing', () => mail.activities);
  ({ gateway, owner, server, taskQueue } = stack);
});

afterAll(() => stack?.close());

interface Subscription {
  id: string;
  tenantId: string;
  planId: string;
  status: string;
  version: number;
  trialEndsAt: string | null;
  cancelAtPeriodEnd: boolean;
  pendingChange: { planId: string; kind: string; requestedAt: string; effectiveAt: string } | null;
}

interface Problem {
  type: string;
  status: number;
  detail: string;
}

const subscriptionOf = (account: RegisteredAccount) => send<Subscription>(gateway, 'GET', '/billing/subscriptions', account.accessToken);

async function statusBecomes(account: RegisteredAccount, status: string): Promise<void> {
  await waitFor(`subscription ${status}`, async () => (await subscriptionOf(account)).body.status === status, 20_000, 50);
}

function webhook(provider: 'stripe' | 'paddle', body: string, signature?: string): Promise<JsonResponse> {
  const header = provider === 'stripe' ? 'stripe-signature' : 'paddle-signature';
  return call(`${gateway.baseUrl}/v1/billing/webhooks/${provider}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...(signature ? { [header]: signature } : {}) }, body,
  });
}

const stripeEvent = (type: string, tenantId: string, object: Record<string, unknown> = {}) =>
  JSON.stringify({ id: `evt_${newId()}`, object: 'event', type, data: { object: { object: 'invoice', metadata: { tenantId }, ...object } } });

const paddleEvent = (type: string, tenantId: string) =>
  JSON.stringify({ event_id: `evt_${newId()}`, event_type: type, occurred_at: new Date().toISOString(), data: { custom_data: { tenantId } } });

describe('plans', () => {
  it('lists the seeded plans and reads one; an unknown plan is 404, no token 401', async () => {
    const account = await registerAccount(gateway);
    const list = await send<{ data: Array<{ id: string; price: number; limits: Record<string, number> }> }>(gateway, 'GET', '/billing/plans', account.accessToken);
    expect(list.status).toBe(200);
    // Other test files add plans of their own to the shared catalogue; the seeded ones keep their order.
    const seeded = ['enterprise', 'free', 'starter', 'pro'];
    expect(list.body.data.map((plan) => plan.id).filter((id) => seeded.includes(id))).toEqual(seeded);

    const pro = await send(gateway, 'GET', '/billing/plans/pro', account.accessToken);
    expect(pro.status).toBe(200);
    expect(pro.body).toMatchObject({
      id: 'pro', price: 9900, currency: 'USD', interval: 'monthly', moneyLimits: { maxTxAmount: 10000000, maxBalance: 100000000 },
    });
    // docs/reference/billing.md (Resources) lists exactly these limits; the money limits have their own member.
    expect(pro.body.limits).toEqual({ users: 50, records: 1000000, storageBytes: 53687091200, eventsPerDay: 1000000, modules: 20 });
    for (const plan of list.body.data) expect(Object.keys(plan.limits).sort()).toEqual(['eventsPerDay', 'modules', 'records', 'storageBytes', 'users']);
    expect((await send<Problem>(gateway, 'GET', '/billing/plans/platinum', account.accessToken)).body.type).toBe(gateway.problemType('not-found'));
    expect((await send(gateway, 'GET', '/billing/plans')).status).toBe(401);
  });

  it('needs billing.view: a member without it gets 403', async () => {
    const account = await registerAccount(gateway);
    const member = await createMember(owner, account.tenant.id, 'member');
    const session = await login(gateway, member);
    expect((await send(gateway, 'GET', '/billing/plans', session.accessToken)).status).toBe(403);
    expect((await send(gateway, 'GET', '/billing/subscriptions', session.accessToken)).status).toBe(403);
  });
});

describe('subscription', () => {
  it('is created trialing on starter at registration, with its workflow running', async () => {
    const account = await registerAccount(gateway);
    const response = await subscriptionOf(account);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ tenantId: account.tenant.id, planId: 'starter', status: 'trialing', version: 1, cancelAtPeriodEnd: false, pendingChange: null });
    const days = (new Date(response.body.trialEndsAt!).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(13.9);
    expect(days).toBeLessThanOrEqual(14);

    const workflow = await server.client.workflow.getHandle(subscriptionWorkflowId(account.tenant.id)).describe();
    expect(workflow.type).toBe('subscriptionLifecycle');
    expect(workflow.status.name).toBe('RUNNING');
    expect(workflow.taskQueue).toBe(taskQueue);

    const filtered = await send(gateway, 'GET', `/billing/subscriptions?tenantId=${account.tenant.id}`, account.accessToken);
    expect(filtered.body).toEqual(response.body);
    expect((await send(gateway, 'GET', `/billing/subscriptions?tenantId=${newId()}`, account.accessToken)).status).toBe(404);
  });

  it('changes plans under an optimistic lock: upgrade at once, downgrade pending, conflicts, cancel-downgrade', async () => {
    const account = await registerAccount(gateway);
    const { body: initial } = await subscriptionOf(account);
    const path = `/billing/subscriptions/${initial.id}`;

    const upgraded = await send<Subscription>(gateway, 'PATCH', path, account.accessToken, { planId: 'pro', version: 1 });
    expect(upgraded.status).toBe(200);
    expect(upgraded.body).toMatchObject({ planId: 'pro', version: 2, pendingChange: null });

    const stale = await send<Problem>(gateway, 'PATCH', path, account.accessToken, { planId: 'free', version: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body.type).toBe(gateway.problemType('optimistic-lock-conflict'));

    const downgraded = await send<Subscription>(gateway, 'PATCH', path, account.accessToken, { planId: 'free', version: 2 });
    expect(downgraded.status).toBe(200);
    expect(downgraded.body).toMatchObject({ planId: 'pro', version: 3, pendingChange: { planId: 'free', kind: 'downgrade' } });
    expect((await subscriptionOf(account)).body).toEqual(downgraded.body);

    const second = await send<Problem>(gateway, 'PATCH', path, account.accessToken, { planId: 'starter', version: 3 });
    expect(second.status).toBe(409);
    expect(second.body.type).toBe(gateway.problemType('plan-change-in-progress'));

    const canceled = await send<Subscription>(gateway, 'POST', `${path}/cancel-downgrade`, account.accessToken, { reason: 'changed our mind' });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ planId: 'pro', version: 4, pendingChange: null });
    const again = await send<Problem>(gateway, 'POST', `${path}/cancel-downgrade`, account.accessToken, { reason: 'twice' });
    expect(again.status).toBe(409);

    const unknownPlan = await send<Problem>(gateway, 'PATCH', path, account.accessToken, { planId: 'platinum', version: 4 });
    expect(unknownPlan.status).toBe(400);

    const planChanges = (await billingEventsOf(owner, account.tenant.id)).filter((e) => e.type === 'billing.plan.changed').map((e) => e.data.change);
    expect(planChanges).toEqual(['upgrade', 'downgrade_scheduled', 'downgrade_canceled']);
  });

  it('blocks creation past a downgrade\'s limits from the first request after the change is answered', async () => {
    const account = await registerAccount(gateway);
    const { body: initial } = await subscriptionOf(account);
    const createUser = () => send<Problem>(gateway, 'POST', '/users', account.accessToken, { email: `${newId()}@example.com`, firstName: 'Ada', lastName: 'King' });
    // Three users on starter (5 allowed); the creations also fill this gateway's plan cache for the tenant.
    for (let i = 0; i < 2; i += 1) expect((await createUser()).status).toBe(201);

    const downgraded = await send<Subscription>(gateway, 'PATCH', `/billing/subscriptions/${initial.id}`, account.accessToken, { planId: 'free', version: 1 });
    expect(downgraded.status).toBe(200);
    expect(downgraded.body.pendingChange).toMatchObject({ planId: 'free', kind: 'downgrade' });
    // free allows 2: no wait for billing.subscription.changed, the answer itself came after the cache forgot the plan.
    const refused = await createUser();
    expect(refused.status).toBe(402);
    expect(refused.body.type).toBe(gateway.problemType('plan-limit-exceeded'));
  });

  it('answers 404 for another tenant\'s subscription id', async () => {
    const [mine, theirs] = await Promise.all([registerAccount(gateway), registerAccount(gateway)]);
    const { body: their } = await subscriptionOf(theirs);
    const path = `/billing/subscriptions/${their.id}`;
    expect((await send(gateway, 'PATCH', path, mine.accessToken, { planId: 'pro', version: 1 })).status).toBe(404);
    expect((await send(gateway, 'DELETE', path, mine.accessToken)).status).toBe(404);
    expect((await send(gateway, 'POST', `${path}/cancel-downgrade`, mine.accessToken, { reason: 'x' })).status).toBe(404);
    expect((await subscriptionOf(theirs)).body.version).toBe(1);
  });

  it('selects the initial plan while trialing, and DELETE cancels at the end of the trial', async () => {
    const account = await registerAccount(gateway);
    const selected = await send<Subscription>(gateway, 'POST', '/billing/subscriptions', account.accessToken, { planId: 'pro' });
    expect(selected.status).toBe(200);
    expect(selected.body).toMatchObject({ planId: 'pro', status: 'trialing', version: 2 });

    const deleted = await send<Subscription>(gateway, 'DELETE', `/billing/subscriptions/${selected.body.id}`, account.accessToken);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ status: 'trialing', cancelAtPeriodEnd: true, version: 3 });
  });
});

describe('webhooks', () => {
  it('refuses a missing, wrong or stale signature with 401 webhook-signature-invalid', async () => {
    const account = await registerAccount(gateway);
    const body = stripeEvent('invoice.paid', account.tenant.id);
    const stale = Math.floor(Date.now() / 1000) - 301;
    for (const signature of [undefined, stripeSignature(body, 'whsec_wrong'), stripeSignature(body, undefined, stale), 'garbage']) {
      const response = await webhook('stripe', body, signature);
      expect(response.status).toBe(401);
      expect((response.body as unknown as Problem).type).toBe(gateway.problemType('webhook-signature-invalid'));
    }
    // Signed over other bytes (re-serialized JSON) does not pass either.
    const tampered = await webhook('stripe', body.replace('"invoice.paid"', '"invoice.paid" '), stripeSignature(body));
    expect(tampered.status).toBe(401);
    const paddleBody = paddleEvent('transaction.completed', account.tenant.id);
    expect((await webhook('paddle', paddleBody, paddleSignature(paddleBody, 'wrong'))).status).toBe(401);
    expect((await subscriptionOf(account)).body.status).toBe('trialing');
  });

  it('answers an unknown provider with 404 not-found: an unknown resource, not a malformed request', async () => {
    const response = await call<Problem>(`${gateway.baseUrl}/v1/billing/webhooks/braintree`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}',
    });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ type: gateway.problemType('not-found'), status: 404 });
  });

  it('invoice.paid → active, invoice.payment_failed → past_due, a duplicate event id is ignored', async () => {
    const account = await registerAccount(gateway);
    const paid = stripeEvent('invoice.paid', account.tenant.id);
    const first = await webhook('stripe', paid, stripeSignature(paid));
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ received: true, duplicate: false, handled: true });
    await statusBecomes(account, 'active');

    const duplicate = await webhook('stripe', paid, stripeSignature(paid));
    expect(duplicate.body).toEqual({ received: true, duplicate: true, handled: false });

    const failed = stripeEvent('invoice.payment_failed', account.tenant.id);
    expect((await webhook('stripe', failed, stripeSignature(failed))).status).toBe(200);
    await statusBecomes(account, 'past_due');
    expect((await subscriptionOf(account)).body.version).toBe(3);

    const statuses = (await billingEventsOf(owner, account.tenant.id))
      .filter((e) => e.type === 'billing.subscription.changed').map((e) => e.data.status);
    expect(statuses).toEqual(['active', 'past_due']);
  });

  it('Paddle transaction.completed → active; subscription.canceled → canceled; unhandled types are acknowledged', async () => {
    const account = await registerAccount(gateway);
    const other = paddleEvent('customer.created', account.tenant.id);
    expect((await webhook('paddle', other, paddleSignature(other))).body).toEqual({ received: true, duplicate: false, handled: false });

    const completed = paddleEvent('transaction.completed', account.tenant.id);
    expect((await webhook('paddle', completed, paddleSignature(completed))).status).toBe(200);
    await statusBecomes(account, 'active');

    const canceled = paddleEvent('subscription.canceled', account.tenant.id);
    expect((await webhook('paddle', canceled, paddleSignature(canceled))).status).toBe(200);
    await statusBecomes(account, 'canceled');
  });

  it('customer.subscription.updated syncs the plan the provider bills', async () => {
    const account = await registerAccount(gateway);
    const updated = stripeEvent('customer.subscription.updated', account.tenant.id, { object: 'subscription', metadata: { tenantId: account.tenant.id, planId: 'pro' } });
    expect((await webhook('stripe', updated, stripeSignature(updated))).status).toBe(200);
    await waitFor('plan pro', async () => (await subscriptionOf(account)).body.planId === 'pro', 20_000, 50);
  });
});
