import Joi from 'joi';
import { newId } from '../../../common/ids';
import { enqueueEvent } from '../../../services/events/publish';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { selectOutboxEventsOfTenant } from '../../../db/queries/events/outbox.queries';
import { withTenant } from '../../../db/tenant';
import { adjustUsage } from '../../../db/queries/billing/usage.queries';
import { defineRoute, type AnyRoute } from '../../../api/http/route-registry';
import { OutboxPublisher } from '../../../workers/outbox/publisher';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { setSubscription } from '../../helpers/billing';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { waitFor } from '../../helpers/http';
import { get, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { ensureCatalogueTopics, testKafka } from '../../helpers/kafka';
import { addMember } from '../../helpers/rbac';
import { send } from '../../helpers/users';

/** Test-only routes of the shapes docs/reference/billing.md (rules 14 and 15) tells apart: a money operation and a creation of records. */
const ok = Joi.object({ ok: Joi.boolean().required() });
const testRoutes: AnyRoute[] = [
  defineRoute({
    namespace: 'money', method: 'POST', path: '/test-billing/money', operationId: 'test.billing.money', summary: 'money operation',
    auth: 'bearer', billing: 'money', schemas: { response: { 200: ok } },
    handler(ctx) { ctx.body = { ok: true }; },
  }),
  defineRoute({
    namespace: 'data', method: 'POST', path: '/test-billing/records', operationId: 'test.billing.records', summary: 'creates a record',
    auth: 'bearer', billing: { creates: 'records' }, schemas: { response: { 201: ok } },
    handler(ctx) { ctx.body = { ok: true }; ctx.status = 201; },
  }),
];

const newUser = () => ({ email: `limit.${newId()}@example.test`, firstName: 'Max', lastName: 'Limit' });

describe('limit enforcement at the gateway (docs/reference/billing.md, Rules: enforcement)', () => {
  let gateway: TestGateway;
  let owner: DatabasePool;
  let app: DatabasePool;

  beforeAll(async () => {
    await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
    owner = await createDbPool(ownerUrl(), { name: 'test-billing-owner', maxPoolSize: 4 });
    app = await createDbPool(appUrl(), { name: 'test-billing-app', maxPoolSize: 4 });
    gateway = await startTestGateway({ routes: testRoutes });
  });
  afterAll(async () => {
    await gateway?.close();
    await owner?.end();
    await app?.end();
  });

  const problemOf = (response: { status: number; body: Record<string, unknown> }) => ({ status: response.status, type: response.body.type });

  describe('plan-limit-exceeded', () => {
    let tenant: RegisteredAccount;
    beforeEach(async () => {
      tenant = await registerAccount(gateway);
    });

    it('refuses POST /users and invitations once users reach the plan limit, with the limit object', async () => {
      // free allows 2 users: the owner and one more member fill it.
      await addMember(gateway, owner, tenant.tenant.id);
      await setSubscription(gateway, owner, tenant.tenant.id, { planId: 'free', status: 'active' });

      const created = await send(gateway, 'POST', '/users', tenant.accessToken, newUser());
      expect(problemOf(created)).toEqual({ status: 402, type: gateway.problemType('plan-limit-exceeded') });
      expect(created.body.limit).toEqual({ resource: 'users', allowed: 2, current: 2, planId: 'free' });
      const invited = await send(gateway, 'POST', '/auth/invite', tenant.accessToken, { email: newUser().email });
      expect(invited.status).toBe(402);
      expect(invited.body.limit).toEqual({ resource: 'users', allowed: 2, current: 2, planId: 'free' });
    });

    it('counts blocked members but not deleted ones', async () => {
      const member = await addMember(gateway, owner, tenant.tenant.id);
      await setSubscription(gateway, owner, tenant.tenant.id, { planId: 'free' });
      expect((await send(gateway, 'PATCH', `/users/${member.userId}`, tenant.accessToken, { status: 'locked' })).status).toBe(200);
      expect((await send(gateway, 'POST', '/users', tenant.accessToken, newUser())).status).toBe(402);

      expect((await send(gateway, 'DELETE', `/users/${member.userId}`, tenant.accessToken)).status).toBe(204);
      const usage = await get<{ usage: { users: { current: number } } }>(gateway, '/billing/usage', tenant.accessToken);
      expect(usage.body.usage.users.current).toBe(1);
    });

    it('applies a pending downgrade\'s lower limits at once', async () => {
      await addMember(gateway, owner, tenant.tenant.id);
      // starter allows 5 users; the pending downgrade to free allows 2.
      await setSubscription(gateway, owner, tenant.tenant.id, { planId: 'starter', pendingChange: { planId: 'free', kind: 'downgrade' } });
      const refused = await send(gateway, 'POST', '/users', tenant.accessToken, newUser());
      expect(refused.status).toBe(402);
      expect(refused.body.limit).toEqual({ resource: 'users', allowed: 2, current: 2, planId: 'free' });
    });

    it('lets a creation through below the limit and refuses it at the limit; 0 is unlimited', async () => {
      await setSubscription(gateway, owner, tenant.tenant.id, { planId: 'free' });
      await withTenant(app, tenant.tenant.id, (tx) => adjustUsage(tx, 'records', 999));
      expect((await send(gateway, 'POST', '/test-billing/records', tenant.accessToken)).status).toBe(201);

      await withTenant(app, tenant.tenant.id, (tx) => adjustUsage(tx, 'records', 1));
      const refused = await send(gateway, 'POST', '/test-billing/records', tenant.accessToken);
      expect(refused.status).toBe(402);
      expect(refused.body.limit).toEqual({ resource: 'records', allowed: 1000, current: 1000, planId: 'free' });

      await setSubscription(gateway, owner, tenant.tenant.id, { planId: 'enterprise' });
      expect((await send(gateway, 'POST', '/test-billing/records', tenant.accessToken)).status).toBe(201);
    });
  });

  describe('subscription status', () => {
    let tenant: RegisteredAccount;
    beforeEach(async () => {
      tenant = await registerAccount(gateway);
    });

    it.each(['trialing', 'active', 'past_due'] as const)('%s: reads, writes and money pass', async (status) => {
      await setSubscription(gateway, owner, tenant.tenant.id, { status });
      expect((await get(gateway, '/users', tenant.accessToken)).status).toBe(200);
      expect((await send(gateway, 'POST', '/roles', tenant.accessToken, { name: `r-${newId()}`, permission_ids: [] })).status).toBe(201);
      expect((await send(gateway, 'POST', '/test-billing/money', tenant.accessToken)).status).toBe(200);
    });

    it('suspended: reads pass, mutations are 402 subscription-suspended, money operations still pass', async () => {
      await setSubscription(gateway, owner, tenant.tenant.id, { status: 'suspended' });
      expect((await get(gateway, '/users', tenant.accessToken)).status).toBe(200);
      expect((await get(gateway, '/billing/usage', tenant.accessToken)).status).toBe(200);
      const created = await send(gateway, 'POST', '/roles', tenant.accessToken, { name: 'blocked', permission_ids: [] });
      expect(problemOf(created)).toEqual({ status: 402, type: gateway.problemType('subscription-suspended') });
      expect(problemOf(await send(gateway, 'POST', '/users', tenant.accessToken, newUser())).status).toBe(402);
      expect((await send(gateway, 'POST', '/test-billing/money', tenant.accessToken)).status).toBe(200);
    });

    it('terminated: every request is 402 subscription-terminated, money included', async () => {
      await setSubscription(gateway, owner, tenant.tenant.id, { status: 'terminated' });
      for (const response of [
        await get(gateway, '/users', tenant.accessToken),
        await send(gateway, 'POST', '/roles', tenant.accessToken, { name: 'blocked', permission_ids: [] }),
        await send(gateway, 'POST', '/test-billing/money', tenant.accessToken),
      ]) {
        expect(problemOf(response)).toEqual({ status: 402, type: gateway.problemType('subscription-terminated') });
      }
    });

    it('serves the plan from its cache until a billing event drops it', async () => {
      await gateway.runtime.gateway.limits!.listener.joined;
      const cache = gateway.runtime.gateway.limits!.cache;
      expect((await get(gateway, '/users', tenant.accessToken)).status).toBe(200);
      const hits = cache.stats.hits;
      expect((await get(gateway, '/users', tenant.accessToken)).status).toBe(200);
      expect(cache.stats.hits).toBe(hits + 1);

      // Changed behind the cache's back: the cached status still answers...
      await owner.query(sql.unsafe`UPDATE subscriptions SET status = 'suspended' WHERE tenant_id = ${tenant.tenant.id}`);
      expect((await send(gateway, 'POST', '/roles', tenant.accessToken, { name: `r-${newId()}`, permission_ids: [] })).status).toBe(201);

      // ...until billing.subscription.changed arrives from Kafka.
      await withTenant(owner, tenant.tenant.id, (tx) => enqueueEvent(tx, {
        tenantId: tenant.tenant.id, type: 'billing.subscription.changed', source: 'billing', key: tenant.tenant.id, data: { status: 'suspended' },
      }));
      const rows = (await selectOutboxEventsOfTenant(owner, tenant.tenant.id)).filter((row) => row.type === 'billing.subscription.changed');
      const publisher = new OutboxPublisher(testKafka());
      try {
        await publisher.publish(rows);
      } finally {
        await publisher.reset();
      }
      await waitFor('the gateway to drop the tenant\'s plan info', async () => !cache.isCached(tenant.tenant.id), 20_000);
      expect((await send(gateway, 'POST', '/roles', tenant.accessToken, { name: 'late', permission_ids: [] })).status).toBe(402);
    });
  });

  it('with BILLING_ENABLED=false every limit check is skipped', async () => {
    const off = await startTestGateway({ routes: testRoutes, env: { BILLING_ENABLED: 'false' } });
    try {
      expect(off.runtime.gateway.limits).toBeNull();
      const tenant = await registerAccount(off);
      await setSubscription(off, owner, tenant.tenant.id, { status: 'terminated' });
      expect((await get(off, '/users', tenant.accessToken)).status).toBe(200);
      expect((await send(off, 'POST', '/test-billing/money', tenant.accessToken)).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});

