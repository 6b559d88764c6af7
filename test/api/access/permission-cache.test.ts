import Joi from 'joi';
import { defineRoute } from '../../../api/http/route-registry';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { archiveModulePermissions, restoreModulePermissions, upsertModulePermissions } from '../../../db/queries/access/permissions.queries';
import { selectOutboxEventsOfTenant } from '../../../db/queries/events/outbox.queries';
import { withTenant } from '../../../db/tenant';
import { OutboxPublisher } from '../../../workers/outbox/publisher';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { waitFor } from '../../helpers/http';
import { get, registerAccount } from '../../helpers/identity';
import { ensureCatalogueTopics, testKafka } from '../../helpers/kafka';
import { addMember, builtInRoleId, send } from '../../helpers/rbac';
import { announced } from '../../helpers/rbac-versions';

/**
 * The gateway's permission cache and the permission registry: archived keys never grant, a cached
 * answer is never older than the tenant's last RBAC change (with the Kafka invalidation running and
 * with it stopped), and auth.role.changed from Kafka drops a tenant's entries.
 */

/** A module route: needs a key that only the crm module registers. */
const crmRoute = defineRoute({
  namespace: 'gateway', method: 'GET', path: '/test/crm-contacts', operationId: 'testCrmContacts', summary: 'Needs crm.contacts.read',
  auth: 'bearer', permission: 'crm.contacts.read',
  schemas: { response: { 200: Joi.object({ ok: Joi.boolean().required() }) } },
  handler(ctx) {
    ctx.body = { ok: true };
  },
});

let gateway: TestGateway;
let owner: DatabasePool;
let app: DatabasePool;

beforeAll(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  gateway = await startTestGateway({ routes: [crmRoute] });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'permission-cache-test-owner' });
  app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'permission-cache-test-app' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
  await app?.end();
});

const CRM_KEYS = [{ key: 'crm.contacts.read', description: 'Read contacts' }, { key: 'crm.contacts.create', description: 'Create contacts' }];
const installCrm = (tenantId: string) => withTenant(app, tenantId, (tx) => upsertModulePermissions(tx, tenantId, 'crm', CRM_KEYS));
const uninstallCrm = (tenantId: string) => withTenant(app, tenantId, (tx) => archiveModulePermissions(tx, tenantId, 'crm'));
const reinstallCrm = (tenantId: string) => withTenant(app, tenantId, (tx) => restoreModulePermissions(tx, tenantId, 'crm'));
const cacheStats = () => ({ ...gateway.runtime.access.cache.stats });

type Role = { id: string; permission_ids: string[]; stale_permissions: string[] };

describe('module permissions in roles', () => {
  it('grants a module key while the module is installed, never while it is archived, and again after reinstall', async () => {
    const tenant = await registerAccount(gateway);
    await installCrm(tenant.tenant.id);
    const groups = await get<{ data: { module: string; permissions: { key: string }[] }[] }>(gateway, '/permissions', tenant.accessToken);
    expect(groups.body.data.find((group) => group.module === 'crm')!.permissions.map((p) => p.key)).toEqual(['crm.contacts.create', 'crm.contacts.read']);

    const reader = (await send<Role>(gateway, 'POST', '/roles', tenant.accessToken, { name: 'reader', permission_ids: ['crm.contacts.read'] })).body;
    const all = (await send<Role>(gateway, 'POST', '/roles', tenant.accessToken, { name: 'crm-all', permission_ids: ['crm.*'] })).body;
    const exact = await addMember(gateway, owner, tenant.tenant.id);
    const wildcard = await addMember(gateway, owner, tenant.tenant.id);
    await send(gateway, 'POST', `/users/${exact.userId}/roles`, tenant.accessToken, { role_id: reader.id });
    await send(gateway, 'POST', `/users/${wildcard.userId}/roles`, tenant.accessToken, { role_id: all.id });
    for (const token of [exact.token, wildcard.token, tenant.accessToken]) {
      expect((await get(gateway, '/test/crm-contacts', token)).status).toBe(200);
    }

    await uninstallCrm(tenant.tenant.id);
    // Changed outside the gateway (as the module workflows would): it applies once announced.
    await announced(gateway, app, tenant.tenant.id);
    for (const token of [exact.token, wildcard.token, tenant.accessToken]) {
      const refused = await get(gateway, '/test/crm-contacts', token);
      expect(refused.status).toBe(403);
      expect(refused.body.type).toBe(gateway.problemType('forbidden'));
    }
    expect((await get<Role>(gateway, `/roles/${reader.id}`, tenant.accessToken)).body.stale_permissions).toEqual(['crm.contacts.read']);
    expect((await get(gateway, `/rbac/roles/${all.id}`, tenant.accessToken)).body.stalePermissions).toEqual(['crm.*']);
    const hidden = await get<{ data: { module: string }[] }>(gateway, '/rbac/permissions', tenant.accessToken);
    expect(hidden.body.data.map((group) => group.module)).toEqual(['system']);
    const effective = await get<{ permissions: string[] }>(gateway, `/rbac/users/${exact.userId}/permissions`, tenant.accessToken);
    expect(effective.body.permissions).toEqual([]);
    // An archived key cannot be given anew, but a role that holds it may keep it.
    expect((await send(gateway, 'POST', '/roles', tenant.accessToken, { name: 'late', permission_ids: ['crm.contacts.read'] })).status).toBe(400);
    expect((await send(gateway, 'PATCH', `/roles/${reader.id}`, tenant.accessToken, { permission_ids: ['crm.contacts.read', 'users.list'] })).status).toBe(200);

    await reinstallCrm(tenant.tenant.id);
    await announced(gateway, app, tenant.tenant.id);
    expect((await get(gateway, '/test/crm-contacts', exact.token)).status).toBe(200);
    expect((await get(gateway, '/test/crm-contacts', wildcard.token)).status).toBe(200);
    expect((await get<Role>(gateway, `/roles/${reader.id}`, tenant.accessToken)).body.stale_permissions).toEqual([]);
  });

  it.each([
    ['crm', 'billing.steal', 'permissions_module_prefix'],
    ['users', 'users.export', 'permissions_module_not_system'],
    ['system', 'system.halt', 'permissions_module_not_system'],
    ['platform', 'platform.halt', 'permissions_module_prefix'],
  ])('refuses module %s registering %s (%s)', async (module, key, constraint) => {
    const tenant = await registerAccount(gateway);
    const register = withTenant(app, tenant.tenant.id, (tx) => upsertModulePermissions(tx, tenant.tenant.id, module, [{ key, description: '' }]));
    await expect(register).rejects.toMatchObject({ constraint });
  });

  it('registers a module\'s keys idempotently: the same key again takes the new description', async () => {
    const tenant = await registerAccount(gateway);
    await installCrm(tenant.tenant.id);
    await withTenant(app, tenant.tenant.id, (tx) => upsertModulePermissions(tx, tenant.tenant.id, 'crm', [{ key: 'crm.contacts.read', description: 'See contacts' }]));
    const groups = await get<{ data: { module: string; permissions: { key: string; description: string }[] }[] }>(gateway, '/permissions', tenant.accessToken);
    expect(groups.body.data.find((group) => group.module === 'crm')!.permissions).toEqual([
      { key: 'crm.contacts.create', description: 'Create contacts' }, { key: 'crm.contacts.read', description: 'See contacts' },
    ]);
  });
});

describe('permission cache', () => {
  it('answers repeated checks from the cache and sees a change on the very next request', async () => {
    const tenant = await registerAccount(gateway);
    const member = await addMember(gateway, owner, tenant.tenant.id);
    const memberRole = await builtInRoleId(owner, tenant.tenant.id, 'member');
    expect((await get(gateway, '/roles', member.token)).status).toBe(403);
    const before = cacheStats();
    expect((await get(gateway, '/roles', member.token)).status).toBe(403);
    expect(cacheStats().hits).toBe(before.hits + 1);

    await send(gateway, 'PATCH', `/roles/${memberRole}`, tenant.accessToken, { permission_ids: ['roles.list'] });
    // Whether the new answer is still cached afterwards is not asserted: the change's auth.role.changed
    // event reaches this gateway's Kafka listener at a moment of its own and may drop it again.
    expect((await get(gateway, '/roles', member.token)).status).toBe(200);
  });

  it('drops a tenant\'s entries when auth.role.changed arrives from Kafka', async () => {
    await gateway.runtime.access.roleChanges.joined;
    const tenant = await registerAccount(gateway);
    expect((await get(gateway, '/roles', tenant.accessToken)).status).toBe(200);
    expect(gateway.runtime.access.cache.isCached(tenant.tenant.id)).toBe(true);

    // The change's outbox row, published as the relay publishes it.
    await send(gateway, 'POST', '/roles', tenant.accessToken, { name: 'kafka-borne', permission_ids: [] });
    expect((await get(gateway, '/roles', tenant.accessToken)).status).toBe(200);
    // Published again if the platform's relay (sharing the database) was first: consumers de-duplicate.
    const rows = (await selectOutboxEventsOfTenant(owner, tenant.tenant.id)).filter((row) => row.type === 'auth.role.changed');
    expect(rows).toHaveLength(1);
    const publisher = new OutboxPublisher(testKafka());
    try {
      await publisher.publish(rows);
    } finally {
      await publisher.reset();
    }
    await waitFor('the gateway to drop the tenant\'s cached permissions', async () => !gateway.runtime.access.cache.isCached(tenant.tenant.id), 20_000);
  });

  it('stays correct with the Kafka consumer stopped: grants and revocations apply on the next request', async () => {
    await gateway.runtime.access.roleChanges.stop();
    const tenant = await registerAccount(gateway);
    const member = await addMember(gateway, owner, tenant.tenant.id);
    const role = (await send<Role>(gateway, 'POST', '/rbac/roles', tenant.accessToken, { name: 'lister', permissions: ['roles.list'] })).body;
    expect((await get(gateway, '/rbac/roles', member.token)).status).toBe(403);
    const warm = cacheStats();
    expect((await get(gateway, '/rbac/roles', member.token)).status).toBe(403);
    expect(cacheStats().hits).toBe(warm.hits + 1);

    await send(gateway, 'POST', `/rbac/roles/${role.id}/assign`, tenant.accessToken, { user_id: member.userId });
    expect((await get(gateway, '/rbac/roles', member.token)).status).toBe(200);
    await send(gateway, 'PUT', `/rbac/roles/${role.id}`, tenant.accessToken, { name: 'lister', permissions: [] });
    expect((await get(gateway, '/rbac/roles', member.token)).status).toBe(403);
    await send(gateway, 'PUT', `/rbac/roles/${role.id}`, tenant.accessToken, { name: 'lister', permissions: ['roles.*'] });
    expect((await get(gateway, '/rbac/roles', member.token)).status).toBe(200);
    await send(gateway, 'POST', `/rbac/roles/${role.id}/revoke`, tenant.accessToken, { user_id: member.userId });
    expect((await get(gateway, '/rbac/roles', member.token)).status).toBe(403);
    expect(cacheStats().invalidations).toBeGreaterThanOrEqual(warm.invalidations);
  });
});
