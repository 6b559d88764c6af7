import { z } from 'zod';
import { newId } from '../../common/ids';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { adjustUsage } from '../../db/queries/billing/usage.queries';
import { withTenant } from '../../db/tenant';
import { provisionModules } from '../../services/data/provision';
import { startTestGateway, type TestGateway } from './app';
import { setSubscription } from './billing';
import { migrateSharedDatabase, ownerUrl } from './db';
import { registerAccount } from './identity';
import { installModule } from './modules';
import { addMember, type Member } from './rbac';

/**
 * The data-layer API against the real gateway and the test database, with the shipped modules'
 * tables provisioned as the platform's bring-up does after its migrations (workers/data-provision.ts).
 */
export interface DataApiStack {
  gateway: TestGateway;
  /** The owner role on the test database: the tests' look at rows, events and audit records, and their setup. */
  owner: DatabasePool;
  close(): Promise<void>;
}

export async function startDataApiStack(name: string, env: Record<string, string> = {}): Promise<DataApiStack> {
  await migrateSharedDatabase();
  const gateway = await startTestGateway({ env });
  const owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: `${name}-owner` });
  await provisionModules(owner, gateway.runtime.modules.catalogue.list());
  return {
    gateway, owner,
    async close() {
      await gateway.close();
      await owner.end();
    },
  };
}

/** A record as the data API answers it. */
export type DataRecord = Record<string, unknown> & { id: string };

/** The ids the platform gives records. */
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface CrmTenant {
  /** The owner's token: the owner role holds every permission. */
  token: string;
  tenantId: string;
  userId: string;
}

/** A new account's tenant with the shipped crm module installed. */
export async function crmTenant(stack: DataApiStack): Promise<CrmTenant> {
  const account = await registerAccount(stack.gateway);
  expect((await installModule(stack.gateway, account.accessToken, 'crm')).status).toBe(201);
  return { token: account.accessToken, tenantId: account.tenant.id, userId: account.user.id };
}

/** A crm tenant on the free plan (1000 records), `used` records already counted. */
export async function crmTenantOnFreePlan(stack: DataApiStack, used: number): Promise<CrmTenant> {
  const tenant = await crmTenant(stack);
  await setSubscription(stack.gateway, stack.owner, tenant.tenantId, { planId: 'free', status: 'active' });
  await withTenant(stack.owner, tenant.tenantId, (tx) => adjustUsage(tx, 'records', used));
  return tenant;
}

/** The tenant's `records` usage counter. */
export const recordsUsed = (stack: DataApiStack, tenantId: string) => stack.owner.oneFirst(sql.type(z.object({ value: z.number() }))`
  SELECT coalesce((SELECT value FROM usage_counters WHERE tenant_id = ${tenantId} AND metric = 'records'), 0)::int AS value
`);

/**
 * A new member of the tenant holding a custom role of exactly these permission keys. The role is
 * written directly by the owner role: the role routes have tests of their own (test/api/access).
 */
export async function memberWithPermissions(stack: DataApiStack, tenantId: string, roleName: string, permissions: readonly string[]): Promise<Member> {
  await stack.owner.query(sql.unsafe`
    INSERT INTO roles (id, tenant_id, name, permissions)
    VALUES (${newId()}, ${tenantId}, ${roleName}, ${sql.array(permissions, 'text')})
  `);
  return addMember(stack.gateway, stack.owner, tenantId, roleName);
}
