import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { get, registerAccount } from '../../helpers/identity';
import { addMember, builtInRoleId, send } from '../../helpers/rbac';

/** Route set B of docs/reference/access.md (`/rbac/...`): camelCase, `permissions`; assign and revoke take `{user_id}`. */

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'roles-b-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

type Role = Record<string, unknown> & { id: string; name: string; permissions: string[] };

describe('route set B', () => {
  it('lists roles page by page in camelCase', async () => {
    const tenant = await registerAccount(gateway);
    const first = await get<{ data: Role[]; next_page_token?: string }>(gateway, '/rbac/roles?page_size=1', tenant.accessToken);
    expect(first.status).toBe(200);
    expect(first.body.data[0]).toEqual(expect.objectContaining({
      name: 'admin', tenantId: tenant.tenant.id, scope: 'tenant', builtIn: true, createdBy: tenant.user.id,
      permissions: expect.arrayContaining(['roles.update']), createdAt: expect.any(String), updatedAt: expect.any(String),
    }));
    expect(first.body.data[0]).not.toHaveProperty('permission_ids');
    expect(first.body.data[0]).not.toHaveProperty('tenant_id');
    const names = [first.body.data[0].name];
    let token = first.body.next_page_token;
    while (token) {
      const next = await get<{ data: Role[]; next_page_token?: string }>(gateway, `/rbac/roles?page_size=1&page_token=${token}`, tenant.accessToken);
      names.push(...next.body.data.map((role) => role.name));
      token = next.body.next_page_token;
    }
    expect(names).toEqual(['admin', 'member', 'owner']);
  });

  it('creates, shows, replaces and deletes a custom role with `permissions`', async () => {
    const tenant = await registerAccount(gateway);
    const created = await send<Role>(gateway, 'POST', '/rbac/roles', tenant.accessToken, {
      name: 'finance', description: 'Money people', permissions: ['billing.view', 'billing.export'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual(expect.objectContaining({
      name: 'finance', description: 'Money people', permissions: ['billing.view', 'billing.export'],
      tenantId: tenant.tenant.id, createdBy: tenant.user.id, builtIn: false, scope: 'tenant',
    }));
    // Set A's field name is not set B's.
    expect((await send(gateway, 'POST', '/rbac/roles', tenant.accessToken, { name: 'x', permission_ids: [] })).status).toBe(400);
    expect((await send(gateway, 'POST', '/rbac/roles', tenant.accessToken, { name: 'finance', permissions: [] })).status).toBe(409);

    const details = await get<Role>(gateway, `/rbac/roles/${created.body.id}`, tenant.accessToken);
    expect(details.body.stalePermissions).toEqual([]);

    const replaced = await send<Role>(gateway, 'PUT', `/rbac/roles/${created.body.id}`, tenant.accessToken, {
      name: 'finance-team', permissions: ['billing.*'],
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual(expect.objectContaining({ name: 'finance-team', description: '', permissions: ['billing.*'] }));
    // PUT replaces: the keys are required.
    expect((await send(gateway, 'PUT', `/rbac/roles/${created.body.id}`, tenant.accessToken, { name: 'finance-team' })).status).toBe(400);
    const refused = await send<{ errors: { field: string }[] }>(gateway, 'PUT', `/rbac/roles/${created.body.id}`, tenant.accessToken, {
      name: 'finance-team', permissions: ['system.restore'],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].field).toBe('permissions[0]');

    expect((await send(gateway, 'DELETE', `/rbac/roles/${created.body.id}`, tenant.accessToken)).status).toBe(204);
    expect((await get(gateway, `/rbac/roles/${created.body.id}`, tenant.accessToken)).status).toBe(404);
    const admin = await builtInRoleId(owner, tenant.tenant.id, 'admin');
    expect((await send(gateway, 'DELETE', `/rbac/roles/${admin}`, tenant.accessToken)).status).toBe(403);
  });

  it('lists permissions grouped by module', async () => {
    const tenant = await registerAccount(gateway);
    const listed = await get<{ data: { module: string; permissions: { key: string }[] }[] }>(gateway, '/rbac/permissions', tenant.accessToken);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((group) => group.module)).toEqual(['system']);
  });

  it('assigns and revokes with {user_id}, effective on the next request, and reports effective permissions', async () => {
    const tenant = await registerAccount(gateway);
    const member = await addMember(gateway, owner, tenant.tenant.id);
    const role = (await send<Role>(gateway, 'POST', '/rbac/roles', tenant.accessToken, { name: 'viewer', permissions: ['users.list', 'roles.list'] })).body;
    expect((await get(gateway, `/rbac/users/${member.userId}/permissions`, member.token)).status).toBe(403);

    const assigned = await send(gateway, 'POST', `/rbac/roles/${role.id}/assign`, tenant.accessToken, { user_id: member.userId });
    expect(assigned.status).toBe(200);
    expect(assigned.body).toEqual({ userId: member.userId, roles: ['member', 'viewer'] });

    const effective = await get(gateway, `/rbac/users/${member.userId}/permissions`, member.token);
    expect(effective.status).toBe(200);
    expect(effective.body).toEqual({ user_id: member.userId, roles: ['member', 'viewer'], permissions: ['roles.list', 'users.list'] });
    const ofOwner = await get(gateway, `/rbac/users/${tenant.user.id}/permissions`, member.token);
    expect(ofOwner.body).toEqual({ user_id: tenant.user.id, roles: ['owner'], permissions: ['*'] });

    const revoked = await send(gateway, 'POST', `/rbac/roles/${role.id}/revoke`, tenant.accessToken, { user_id: member.userId });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ userId: member.userId, roles: ['member'] });
    expect((await get(gateway, `/rbac/users/${member.userId}/permissions`, member.token)).status).toBe(403);
    expect((await send(gateway, 'POST', `/rbac/roles/${role.id}/revoke`, tenant.accessToken, { user_id: member.userId })).status).toBe(404);

    const ownerRole = await builtInRoleId(owner, tenant.tenant.id, 'owner');
    expect((await send(gateway, 'POST', `/rbac/roles/${ownerRole}/revoke`, tenant.accessToken, { user_id: tenant.user.id })).status).toBe(403);
    expect((await send(gateway, 'POST', `/rbac/roles/${ownerRole}/assign`, tenant.accessToken, { user_id: member.userId })).status).toBe(403);
  });

  it('answers 404 across tenants', async () => {
    const a = await registerAccount(gateway);
    const b = await registerAccount(gateway);
    const bRole = (await send<Role>(gateway, 'POST', '/rbac/roles', b.accessToken, { name: 'b-role', permissions: [] })).body.id;
    const aRole = (await send<Role>(gateway, 'POST', '/rbac/roles', a.accessToken, { name: 'a-role', permissions: [] })).body.id;
    const attempts = await Promise.all([
      get(gateway, `/rbac/roles/${bRole}`, a.accessToken),
      send(gateway, 'PUT', `/rbac/roles/${bRole}`, a.accessToken, { name: 'mine', permissions: [] }),
      send(gateway, 'DELETE', `/rbac/roles/${bRole}`, a.accessToken),
      send(gateway, 'POST', `/rbac/roles/${bRole}/assign`, a.accessToken, { user_id: a.user.id }),
      send(gateway, 'POST', `/rbac/roles/${aRole}/assign`, a.accessToken, { user_id: b.user.id }),
      send(gateway, 'POST', `/rbac/roles/${bRole}/revoke`, a.accessToken, { user_id: b.user.id }),
      get(gateway, `/rbac/users/${b.user.id}/permissions`, a.accessToken),
    ]);
    for (const attempt of attempts) expect(attempt.status).toBe(404);
  });
});
