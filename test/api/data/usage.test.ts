import { z } from 'zod';
import { sql } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import { setSubscription } from '../../helpers/billing';
import { crmTenantOnFreePlan, recordsUsed, startDataApiStack, type DataApiStack, type DataRecord } from '../../helpers/data-api';
import { send } from '../../helpers/rbac';

/**
 * Records against the plan's `records` limit (docs/reference/data.md#rule-10; issue 16): a create counts,
 * at the ceiling it is 402 plan-limit-exceeded with the limit object and writes nothing, a pending
 * downgrade's lower limit applies at once, and a soft delete gives the unit back.
 */

let stack: DataApiStack;

beforeAll(async () => {
  stack = await startDataApiStack('data-usage-test');
});

afterAll(async () => {
  await stack?.close();
});

const bodies = { companies: { name: 'Acme' }, contacts: { firstName: 'Ada' } };
const create = (token: string, model: keyof typeof bodies = 'companies') =>
  send<DataRecord & { limit?: unknown }>(stack.gateway, 'POST', `/data/crm/${model}`, token, bodies[model]);

/** Row-level security is FORCEd on module tables: the count is read in the tenant. */
const companiesOf = (tenantId: string) => withTenant(stack.owner, tenantId, (tx) => tx.oneFirst(sql.type(z.object({ count: z.number() }))`
  SELECT count(*)::int AS count FROM mod_crm.companies WHERE tenant_id = ${tenantId}
`));

describe('the plan\'s records limit', () => {
  it('counts a created record, refuses one at the ceiling with 402 and the limit object, and writes nothing', async () => {
    const { token, tenantId } = await crmTenantOnFreePlan(stack, 998);
    expect((await create(token)).status).toBe(201);
    expect((await create(token, 'contacts')).status).toBe(201);
    expect(await recordsUsed(stack, tenantId)).toBe(1000);

    const refused = await create(token);
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual(expect.objectContaining({
      type: stack.gateway.problemType('plan-limit-exceeded'), limit: { resource: 'records', allowed: 1000, current: 1000, planId: 'free' },
    }));
    expect(await recordsUsed(stack, tenantId)).toBe(1000);
    expect(await companiesOf(tenantId)).toBe(1);
  });

  it('gives the unit back on a soft delete, so a new record fits again', async () => {
    const { token, tenantId } = await crmTenantOnFreePlan(stack, 999);
    const company = await create(token);
    expect(company.status).toBe(201);
    expect((await create(token)).status).toBe(402);

    expect((await send(stack.gateway, 'DELETE', `/data/crm/companies/${company.body.id}`, token)).status).toBe(204);
    expect(await recordsUsed(stack, tenantId)).toBe(999);
    expect((await create(token)).status).toBe(201);
    // A refused delete (the record is gone already) gives nothing back.
    expect((await send(stack.gateway, 'DELETE', `/data/crm/companies/${company.body.id}`, token)).status).toBe(404);
    expect(await recordsUsed(stack, tenantId)).toBe(1000);
  });

  it('applies a pending downgrade\'s lower limit at once', async () => {
    const { token, tenantId } = await crmTenantOnFreePlan(stack, 1000);
    await setSubscription(stack.gateway, stack.owner, tenantId, { planId: 'starter', pendingChange: { planId: 'free', kind: 'downgrade' } });
    const refused = await create(token);
    expect(refused.status).toBe(402);
    expect(refused.body.limit).toEqual({ resource: 'records', allowed: 1000, current: 1000, planId: 'free' });

    await setSubscription(stack.gateway, stack.owner, tenantId, { pendingChange: null });
    expect((await create(token)).status).toBe(201);
  });

  it('counts concurrent creations one after the other: none passes the ceiling', async () => {
    const { token, tenantId } = await crmTenantOnFreePlan(stack, 995);
    const answers = await Promise.all(Array.from({ length: 10 }, () => create(token)));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(5);
    expect(answers.filter((answer) => answer.status === 402)).toHaveLength(5);
    expect(await recordsUsed(stack, tenantId)).toBe(1000);
    expect(await companiesOf(tenantId)).toBe(5);
  });
});
