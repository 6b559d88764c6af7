import Joi from 'joi';
import { installModule as installThroughService } from '../../../services/modules/module-registry';
import { InstalledModules } from '../../../api/runtime/installed-modules';
import { defineRoute } from '../../../api/http/route-registry';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { waitFor } from '../../helpers/http';
import { get, registerAccount } from '../../helpers/identity';
import { ensureCatalogueTopics } from '../../helpers/kafka';
import { configureModule, installModule, relayTenantEvents, uninstallModule } from '../../helpers/modules';
import { addMember } from '../../helpers/rbac';

/**
 * The gateway's "module installed" step (docs/reference/gateway.md#rule-5: token, tenant, module installed, permission,
 * ...): a route of a module that is not installed and active for the tenant answers 404
 * module-not-found before authorization and before its handler runs; the installed set is cached
 * per tenant and follows module.registry.* events from Kafka, so a change made through another
 * gateway process applies without waiting for the cache's TTL.
 */

/** What the test routes' handlers did: a handler that ran leaves its tenant here. */
const handled: string[] = [];

const ok = { 200: Joi.object({ ok: Joi.boolean().required() }) };

const crmRoute = defineRoute({
  namespace: 'gateway', method: 'GET', path: '/test/crm-only', operationId: 'testCrmOnly', summary: 'A route of the crm module',
  auth: 'bearer', module: 'crm', permission: 'crm.contacts.read',
  schemas: { response: ok },
  handler(ctx) {
    handled.push(ctx.state.auth!.tenantId);
    ctx.body = { ok: true };
  },
});

/** A data-layer shaped route: the module is a path parameter. */
const dataRoute = defineRoute<{ module: string }>({
  namespace: 'gateway', method: 'GET', path: '/test/data/:module/records', operationId: 'testDataRecords', summary: 'A route of any module',
  auth: 'bearer', module: (params) => params.module,
  schemas: { params: Joi.object({ module: Joi.string().required() }), response: ok },
  handler(ctx) {
    handled.push(ctx.state.auth!.tenantId);
    ctx.body = { ok: true };
  },
});

let gateway: TestGateway;
let owner: DatabasePool;
let app: DatabasePool;

beforeAll(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  // A TTL far beyond the test: only a change in this process or a Kafka event refreshes the cache.
  gateway = await startTestGateway({ routes: [crmRoute, dataRoute], env: { MODULE_CACHE_TTL_MS: '600000' } });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'module-gate-test-owner' });
  app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'module-gate-test-app' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
  await app?.end();
});

const handledFor = (tenantId: string) => handled.filter((id) => id === tenantId).length;

async function expectModuleNotFound(path: string, token: string): Promise<void> {
  const refused = await get(gateway, path, token);
  expect(refused.status).toBe(404);
  expect(refused.body.type).toBe(gateway.problemType('module-not-found'));
}

describe('a route of a module', () => {
  it('answers 404 module-not-found until the module is installed, and again once deactivated or uninstalled', async () => {
    const tenant = await registerAccount(gateway);
    const token = tenant.accessToken;

    await expectModuleNotFound('/test/crm-only', token);
    expect(handledFor(tenant.tenant.id)).toBe(0);

    expect((await installModule(gateway, token, 'crm')).status).toBe(201);
    expect((await get(gateway, '/test/crm-only', token)).status).toBe(200);
    expect(handledFor(tenant.tenant.id)).toBe(1);

    await configureModule(gateway, token, 'crm', { status: 'inactive' });
    await expectModuleNotFound('/test/crm-only', token);
    await configureModule(gateway, token, 'crm', { status: 'active' });
    expect((await get(gateway, '/test/crm-only', token)).status).toBe(200);

    await uninstallModule(gateway, token, 'crm');
    await expectModuleNotFound('/test/crm-only', token);
    await installModule(gateway, token, 'crm');
    expect((await get(gateway, '/test/crm-only', token)).status).toBe(200);
    expect(handledFor(tenant.tenant.id)).toBe(3);
  });

  it('checks the token first and the module before the permission', async () => {
    const tenant = await registerAccount(gateway);
    const member = await addMember(gateway, owner, tenant.tenant.id);
    expect((await get(gateway, '/test/crm-only')).status).toBe(401);
    // Not installed: 404 even for a caller who lacks the permission (no 403 says the route exists for the tenant).
    await expectModuleNotFound('/test/crm-only', member.token);
    await installModule(gateway, tenant.accessToken, 'crm');
    expect((await get(gateway, '/test/crm-only', member.token)).status).toBe(403);
    expect(handledFor(tenant.tenant.id)).toBe(0);
  });

  it('keeps tenants apart: one tenant\'s install admits nobody else', async () => {
    const first = await registerAccount(gateway);
    const second = await registerAccount(gateway);
    await installModule(gateway, first.accessToken, 'crm');
    expect((await get(gateway, '/test/crm-only', first.accessToken)).status).toBe(200);
    await expectModuleNotFound('/test/crm-only', second.accessToken);
    expect(handledFor(second.tenant.id)).toBe(0);
  });

  it('takes the module from the path when the route says so; unknown or malformed names are not installed', async () => {
    const tenant = await registerAccount(gateway);
    await expectModuleNotFound('/test/data/crm/records', tenant.accessToken);
    await installModule(gateway, tenant.accessToken, 'crm');
    expect((await get(gateway, '/test/data/crm/records', tenant.accessToken)).status).toBe(200);
    for (const name of ['shop', 'CRM', '..%2Fcrm', 'crm%2F..', '__proto__', 'constructor']) {
      await expectModuleNotFound(`/test/data/${name}/records`, tenant.accessToken);
    }
    expect(handledFor(tenant.tenant.id)).toBe(1);
  });
});

describe('the installed-modules cache', () => {
  it('answers repeated requests without reloading', async () => {
    const tenant = await registerAccount(gateway);
    await installModule(gateway, tenant.accessToken, 'crm');
    expect((await get(gateway, '/test/crm-only', tenant.accessToken)).status).toBe(200);
    const before = { ...gateway.runtime.modules.installed.stats };
    for (let i = 0; i < 10; i += 1) expect((await get(gateway, '/test/crm-only', tenant.accessToken)).status).toBe(200);
    // The install's own module.registry.installed event may reach this gateway's listener (the
    // platform's relay publishes it) in the middle of the loop and evict the tenant once.
    const misses = gateway.runtime.modules.installed.stats.misses - before.misses;
    expect(misses).toBeLessThanOrEqual(1);
    expect(gateway.runtime.modules.installed.stats.hits - before.hits).toBe(10 - misses);
  });

  it('follows a change made through another gateway process when its module.registry event arrives from Kafka', async () => {
    await gateway.runtime.modules.changes.joined;
    const tenant = await registerAccount(gateway);
    await expectModuleNotFound('/test/crm-only', tenant.accessToken);
    expect(gateway.runtime.modules.installed.isCached(tenant.tenant.id)).toBe(true);

    // Another process: the same database, a cache of its own.
    const elsewhere = { db: app, catalogue: gateway.runtime.modules.catalogue, enforcePlanLimits: true, installed: new InstalledModules({ db: app, ttlMs: 600_000, maxTenants: 10 }) };
    await installThroughService(elsewhere, { tenantId: tenant.tenant.id, userId: tenant.user.id, ip: null, userAgent: null }, 'crm');
    // Nothing but the event drops the entry (the TTL is 10 minutes). No assertion on the stale answer
    // in between: the platform's relay, when it runs, may publish the install's event at any moment.
    expect(await relayTenantEvents(owner, tenant.tenant.id, 'module.registry.')).toBe(1);
    await waitFor('the gateway to drop the tenant\'s installed modules', async () => !gateway.runtime.modules.installed.isCached(tenant.tenant.id), 20_000);
    expect((await get(gateway, '/test/crm-only', tenant.accessToken)).status).toBe(200);
  });

  it('with a zero TTL, reads every request afresh', async () => {
    const fresh = await startTestGateway({ routes: [crmRoute], env: { MODULE_CACHE_TTL_MS: '0' } });
    try {
      const tenant = await registerAccount(fresh);
      const elsewhere = { db: app, catalogue: fresh.runtime.modules.catalogue, enforcePlanLimits: true, installed: new InstalledModules({ db: app, ttlMs: 0, maxTenants: 10 }) };
      const caller = { tenantId: tenant.tenant.id, userId: tenant.user.id, ip: null, userAgent: null };
      expect((await get(fresh, '/test/crm-only', tenant.accessToken)).status).toBe(404);
      await installThroughService(elsewhere, caller, 'crm');
      expect((await get(fresh, '/test/crm-only', tenant.accessToken)).status).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});
