import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { adjustUsage } from '../../../db/queries/billing/usage.queries';
import { withTenant } from '../../../db/tenant';
import { provisionModules } from '../../../services/data/provision';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { setSubscription } from '../../helpers/billing';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { registerAccount } from '../../helpers/identity';
import { installModule } from '../../helpers/modules';
import { send } from '../../helpers/rbac';

/**
 * Records against the plan's `records` limit (document 1, Limits rule 5; issue 16): a create counts,
 * at the ceiling it is 402 plan-limit-exceeded with the limit object and writes nothing, a pending
 * downgrade's lower limit applies at once, and a soft delete gives the unit back.
 */

let gateway: TestGateway;
let owner: DatabasePool;
let app: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'data-usage-test-owner' });
  app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'data-usage-test-app' });
  await provisionModules(owner, gateway.runtime.modules.catalogue.list());
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
  await app?.end();
});

type DataRecord = Record<string, unknown> & { id: string };

/** A tenant with crm on the free plan (1000 records), `used` records already counted. */
async function freeTenant(used: number) {
  const account = await registerAccount(gateway);
  expect((await installModule(gateway, account.accessToken, 'crm')).status).toBe(201);
  await setSubscription(gateway, owner, account.tenant.id, { planId: 'free', status: 'active' });
  await withTenant(app, account.tenant.id, (tx) => adjustUsage(tx, 'records', used));
  return { token: account.accessToken, tenantId: account.tenant.id };
}

const bodies = { companies: { name: 'Acme' }, contacts: { firstName: 'Ada' } };
const create = (token: string, model: keyof typeof bodies = 'companies') =>
  send<DataRecord & { limit?: unknown }>(gateway, 'POST', `/data/crm/${model}`, token, bodies[model]);

const recordsUsed = (tenantId: string) => owner.oneFirst(sql.type(z.object({ value: z.number() }))`
  SELECT coalesce((SELECT value FROM usage_counters WHERE tenant_id = ${tenantId} AND metric = 'records'), 0)::int AS value
`);

/** Row-level security is FORCEd on module tables: the count is read in the tenant. */
const companiesOf = (tenantId: string) => withTenant(app, tenantId, (tx) => tx.oneFirst(sql.type(z.object({ count: z.number() }))`
  SELECT count(*)::int AS count FROM mod_crm.companies WHERE tenant_id = ${tenantId}
`));

describe('the plan\'s records limit', () => {
  it('counts a created record, refuses one at the ceiling with 402 and the limit object, and writes nothing', async () => {
    const { token, tenantId } = await freeTenant(998);
    expect((await create(token)).status).toBe(201);
    expect((await create(token, 'contacts')).status).toBe(201);
    expect(await recordsUsed(tenantId)).toBe(1000);

    const refused = await create(token);
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual(expect.objectContaining({
      type: gateway.problemType('plan-limit-exceeded'), limit: { resource: 'records', allowed: 1000, current: 1000, planId: 'free' },
    }));
    expect(await recordsUsed(tenantId)).toBe(1000);
    expect(await companiesOf(tenantId)).toBe(1);
  });

  it('gives the unit back on a soft delete, so a new record fits again', async () => {
    const { token, tenantId } = await freeTenant(999);
    const company = await create(token);
    expect(company.status).toBe(201);
    expect((await create(token)).status).toBe(402);

    expect((await send(gateway, 'DELETE', `/data/crm/companies/${company.body.id}`, token)).status).toBe(204);
    expect(await recordsUsed(tenantId)).toBe(999);
    expect((await create(token)).status).toBe(201);
    // A refused delete (the record is gone already) gives nothing back.
    expect((await send(gateway, 'DELETE', `/data/crm/companies/${company.body.id}`, token)).status).toBe(404);
    expect(await recordsUsed(tenantId)).toBe(1000);
  });

  it('applies a pending downgrade\'s lower limit at once', async () => {
    const { token, tenantId } = await freeTenant(1000);
    await setSubscription(gateway, owner, tenantId, { planId: 'starter', pendingChange: { planId: 'free', kind: 'downgrade' } });
    const refused = await create(token);
    expect(refused.status).toBe(402);
    expect(refused.body.limit).toEqual({ resource: 'records', allowed: 1000, current: 1000, planId: 'free' });

    await setSubscription(gateway, owner, tenantId, { pendingChange: null });
    expect((await create(token)).status).toBe(201);
  });

  it('counts concurrent creations one after the other: none passes the ceiling', async () => {
    const { token, tenantId } = await freeTenant(995);
    const answers = await Promise.all(Array.from({ length: 10 }, () => create(token)));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(5);
    expect(answers.filter((answer) => answer.status === 402)).toHaveLength(5);
    expect(await recordsUsed(tenantId)).toBe(1000);
    expect(await companiesOf(tenantId)).toBe(5);
  });
});
