import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { lockPlatformSetup } from '../../../db/queries/identity/platform.queries';
import { SYSTEM_PERMISSIONS } from '../../../services/access/permissions';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { get, outboxEventsOf, registerAccount } from '../../helpers/identity';
import { addMember, builtInRoleId, send } from '../../helpers/rbac';

/** Route set A of docs/reference/access.md (`/roles`, `/permissions`, `/users/:id/roles`): snake_case, `permission_ids`. */

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'roles-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

type Role = Record<string, unknown> & { id: string; name: string; permission_ids: string[] };

describe('route set A', () => {
  it('lists the built-in roles page by page, in snake_case', async () => {
    const tenant = await registerAccount(gateway);
    const first = await get<{ data: Role[]; next_page_token?: string }>(gateway, '/roles?page_size=2', tenant.accessToken);
    expect(first.status).toBe(200);
    expect(first.body.data.map((role) => role.name)).toEqual(['admin', 'member']);
    expect(first.body.data[0]).toEqual(expect.objectContaining({
      tenant_id: tenant.tenant.id, scope: 'tenant', built_in: true, created_by: tenant.user.id,
      permission_ids: expect.arrayContaining(['users.list', 'roles.assign']),
    }));
    expect(first.body.data[0].permission_ids).not.toContain('system.backup');
    const second = await get<{ data: Role[]; next_page_token?: string }>(
      gateway, `/roles?page_size=2&page_token=${first.body.next_page_token}`, tenant.accessToken,
    );
    expect(second.body.data.map((role) => role.name)).toEqual(['owner']);
    expect(second.body.data[0].permission_ids).toEqual(['*']);
    expect(second.body.next_page_token).toBeUndefined();

    expect((await get(gateway, '/roles?page_token=bm90LWEtdG9rZW4', tenant.accessToken)).status).toBe(400);
    expect((await get(gateway, '/roles?page_size=101', tenant.accessToken)).status).toBe(400);
  });

  it('creates, shows, changes and deletes a custom role', async () => {
    const tenant = await registerAccount(gateway);
    const created = await send<Role>(gateway, 'POST', '/roles', tenant.accessToken, {
      name: 'support', description: 'Helps customers', permission_ids: ['users.list', 'billing.*'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual(expect.objectContaining({
      name: 'support', description: 'Helps customers', permission_ids: ['users.list', 'billing.*'], scope: 'tenant',
      tenant_id: tenant.tenant.id, created_by: tenant.user.id, built_in: false,
    }));
    expect(created.body).not.toHaveProperty('permissions');

    const duplicate = await send(gateway, 'POST', '/roles', tenant.accessToken, { name: 'support', permission_ids: [] });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.type).toBe(gateway.problemType('conflict'));

    const details = await get<Role>(gateway, `/roles/${created.body.id}`, tenant.accessToken);
    expect(details.status).toBe(200);
    expect(details.body.stale_permissions).toEqual([]);

    const patched = await send<Role>(gateway, 'PATCH', `/roles/${created.body.id}`, tenant.accessToken, { permission_ids: ['audit.read'] });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual(expect.objectContaining({ name: 'support', description: 'Helps customers', permission_ids: ['audit.read'] }));

    expect((await send(gateway, 'DELETE', `/roles/${created.body.id}`, tenant.accessToken)).status).toBe(204);
    expect((await get(gateway, `/roles/${created.body.id}`, tenant.accessToken)).status).toBe(404);
  });

  it.each([
    ['*', 'the owner wildcard'],
    ['system.backup', 'a platform-only key'],
    ['system.*', 'the platform wildcard'],
    ['platform.things', 'a reserved prefix'],
    ['crm.contacts.read', 'a key no module registered'],
    ['nope.*', 'the wildcard of an unknown module'],
    ['users.list.*', 'a wildcard below a module'],
  ])('refuses %s (%s) with 400 naming the field', async (key) => {
    const tenant = await registerAccount(gateway);
    const refused = await send<{ type: string; errors: { field: string; code: string }[] }>(
      gateway, 'POST', '/roles', tenant.accessToken, { name: 'bad', permission_ids: ['users.list', key] },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.type).toBe(gateway.problemType('validation-error'));
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'permission_ids[1]', code: 'INVALID_VALUE' })]);
  });

  it('lists the permissions tenant roles can hold, grouped by module', async () => {
    const tenant = await registerAccount(gateway);
    const listed = await get<{ data: { module: string; permissions: { key: string; description: string }[] }[] }>(
      gateway, '/permissions', tenant.accessToken,
    );
    expect(listed.status).toBe(200);
    const system = listed.body.data.find((group) => group.module === 'system')!;
    const keys = system.permissions.map((p) => p.key);
    expect(keys).toEqual(expect.arrayContaining(['users.list', 'roles.create', 'billing.plan.change']));
    expect(keys.filter((key) => key.startsWith('system.'))).toEqual([]);
    expect(system.permissions.every((p) => p.description.length > 0)).toBe(true);
  });

  it('keeps the registry of system keys in step with the code', async () => {
    const rows = await owner.anyFirst(sql.type(z.object({ key: z.string() }))`SELECT key FROM permissions WHERE tenant_id IS NULL ORDER BY key`);
    expect([...rows]).toEqual([...SYSTEM_PERMISSIONS].sort());
  });
});

describe('built-in and owner rules', () => {
  it('refuses to delete or rename built-in roles and to strip the owner of *', async () => {
    const tenant = await registerAccount(gateway);
    for (const name of ['owner', 'admin', 'member']) {
      const id = await builtInRoleId(owner, tenant.tenant.id, name);
      const deleted = await send(gateway, 'DELETE', `/roles/${id}`, tenant.accessToken);
      expect(deleted.status).toBe(403);
      expect(deleted.body.type).toBe(gateway.problemType('forbidden'));
      expect((await send(gateway, 'PATCH', `/roles/${id}`, tenant.accessToken, { name: `${name}-2` })).status).toBe(403);
    }
    const ownerRole = await builtInRoleId(owner, tenant.tenant.id, 'owner');
    expect((await send(gateway, 'PATCH', `/roles/${ownerRole}`, tenant.accessToken, { permission_ids: ['users.list'] })).status).toBe(403);
    expect((await send(gateway, 'PATCH', `/roles/${ownerRole}`, tenant.accessToken, { permission_ids: [] })).status).toBe(403);
    const described = await send<Role>(gateway, 'PATCH', `/roles/${ownerRole}`, tenant.accessToken, { description: 'The boss' });
    expect(described.status).toBe(200);
    expect(described.body.permission_ids).toEqual(['*']);

    const member = await builtInRoleId(owner, tenant.tenant.id, 'member');
    const widened = await send<Role>(gateway, 'PATCH', `/roles/${member}`, tenant.accessToken, { permission_ids: ['settings.read'] });
    expect(widened.status).toBe(200);
    expect(widened.body.permission_ids).toEqual(['settings.read']);
  });

  it('never assigns the owner role and never revokes it from the last owner', async () => {
    const tenant = await registerAccount(gateway);
    const ownerRole = await builtInRoleId(owner, tenant.tenant.id, 'owner');
    const member = await addMember(gateway, owner, tenant.tenant.id);
    expect((await send(gateway, 'POST', `/users/${member.userId}/roles`, tenant.accessToken, { role_id: ownerRole })).status).toBe(403);
    const revoked = await send(gateway, 'DELETE', `/users/${tenant.user.id}/roles/${ownerRole}`, tenant.accessToken);
    expect(revoked.status).toBe(403);
    expect(revoked.body.type).toBe(gateway.problemType('forbidden'));

    // With a second owner (seeded, as an ownership transfer would leave it), one of them may go.
    const coOwner = await addMember(gateway, owner, tenant.tenant.id, 'owner');
    expect((await send(gateway, 'DELETE', `/users/${coOwner.userId}/roles/${ownerRole}`, tenant.accessToken)).status).toBe(204);
    expect((await get(gateway, '/roles', coOwner.token)).status).toBe(403);
  });
});

describe('assignment', () => {
  it('grants a new role\'s permission on the next request, without a new token, and takes it back on revocation', async () => {
    const tenant = await registerAccount(gateway);
    const member = await addMember(gateway, owner, tenant.tenant.id);
    expect((await get(gateway, '/roles', member.token)).status).toBe(403);

    const role = await send<Role>(gateway, 'POST', '/roles', tenant.accessToken, { name: 'auditor', permission_ids: ['roles.list'] });
    const assigned = await send(gateway, 'POST', `/users/${member.userId}/roles`, tenant.accessToken, { role_id: role.body.id });
    expect(assigned.status).toBe(200);
    expect(assigned.body).toEqual({ user_id: member.userId, roles: ['auditor', 'member'] });
    expect((await get(gateway, '/roles', member.token)).status).toBe(200);

    // Assigning again changes nothing.
    expect((await send(gateway, 'POST', `/users/${member.userId}/roles`, tenant.accessToken, { role_id: role.body.id })).status).toBe(200);

    expect((await send(gateway, 'DELETE', `/users/${member.userId}/roles/${role.body.id}`, tenant.accessToken)).status).toBe(204);
    expect((await get(gateway, '/roles', member.token)).status).toBe(403);
    expect((await send(gateway, 'DELETE', `/users/${member.userId}/roles/${role.body.id}`, tenant.accessToken)).status).toBe(404);
  });

  it('needs roles.assign, roles.create, roles.update and roles.delete', async () => {
    const tenant = await registerAccount(gateway);
    const member = await addMember(gateway, owner, tenant.tenant.id);
    const memberRole = await builtInRoleId(owner, tenant.tenant.id, 'member');
    const attempts = [
      send(gateway, 'POST', '/roles', member.token, { name: 'x', permission_ids: [] }),
      send(gateway, 'PATCH', `/roles/${memberRole}`, member.token, { description: 'x' }),
      send(gateway, 'DELETE', `/roles/${memberRole}`, member.token),
      send(gateway, 'POST', `/users/${member.userId}/roles`, member.token, { role_id: memberRole }),
      send(gateway, 'GET', '/permissions', member.token),
    ];
    for (const attempt of await Promise.all(attempts)) expect(attempt.status).toBe(403);
  });
});

describe('tenant isolation', () => {
  it('answers 404 for another tenant\'s roles and users, and for platform-scoped roles', async () => {
    const a = await registerAccount(gateway);
    const b = await registerAccount(gateway);
    const bRole = (await send<Role>(gateway, 'POST', '/roles', b.accessToken, { name: 'b-only', permission_ids: [] })).body.id;
    const aRole = (await send<Role>(gateway, 'POST', '/roles', a.accessToken, { name: 'a-only', permission_ids: [] })).body.id;
    const attempts = await Promise.all([
      get(gateway, `/roles/${bRole}`, a.accessToken),
      send(gateway, 'PATCH', `/roles/${bRole}`, a.accessToken, { description: 'mine now' }),
      send(gateway, 'DELETE', `/roles/${bRole}`, a.accessToken),
      send(gateway, 'POST', `/users/${a.user.id}/roles`, a.accessToken, { role_id: bRole }),
      send(gateway, 'POST', `/users/${b.user.id}/roles`, a.accessToken, { role_id: aRole }),
      send(gateway, 'DELETE', `/users/${b.user.id}/roles/${bRole}`, a.accessToken),
    ]);
    for (const attempt of attempts) {
      expect(attempt.status).toBe(404);
      expect(attempt.body.type).toBe(gateway.problemType('not-found'));
    }
    // The Platform Owner's role (created by the setup command as the owner role) is no tenant's. Made
    // under the setup command's lock: the command's own ensure of the role (select, then insert) in
    // another file must not race this upsert on a database where the role does not exist yet.
    const platformRole = await owner.transaction(async (tx) => {
      await lockPlatformSetup(tx);
      return tx.oneFirst(sql.type(z.object({ id: z.string() }))`
        INSERT INTO roles (id, tenant_id, name, permissions, scope, built_in)
        VALUES (gen_random_uuid(), NULL, 'platform_owner', '{*}', 'platform', true)
        ON CONFLICT (name) WHERE tenant_id IS NULL DO UPDATE SET updated_at = now()
        RETURNING id
      `);
    });
    expect((await get(gateway, `/roles/${platformRole}`, a.accessToken)).status).toBe(404);
    expect((await send(gateway, 'POST', `/users/${a.user.id}/roles`, a.accessToken, { role_id: platformRole })).status).toBe(404);
    const bList = await get<{ data: Role[] }>(gateway, '/roles', b.accessToken);
    expect(bList.body.data.map((role) => role.name)).not.toContain('a-only');
    expect((await get(gateway, `/roles/${bRole}`, b.accessToken)).body.description).toBe('');
  });
});

describe('events and audit', () => {
  it('writes auth.role.changed and an audit record with every change, in its transaction', async () => {
    const tenant = await registerAccount(gateway);
    const member = await addMember(gateway, owner, tenant.tenant.id);
    const role = (await send<Role>(gateway, 'POST', '/roles', tenant.accessToken, { name: 'ops', permission_ids: ['users.list'] })).body;
    await send(gateway, 'PATCH', `/roles/${role.id}`, tenant.accessToken, { name: 'operations', permission_ids: ['users.*'] });
    await send(gateway, 'POST', `/users/${member.userId}/roles`, tenant.accessToken, { role_id: role.id });
    await send(gateway, 'DELETE', `/users/${member.userId}/roles/${role.id}`, tenant.accessToken);
    await send(gateway, 'DELETE', `/roles/${role.id}`, tenant.accessToken);
    // A refused change writes nothing.
    await send(gateway, 'POST', '/roles', tenant.accessToken, { name: 'bad', permission_ids: ['*'] });

    const events = await outboxEventsOf(owner, tenant.tenant.id);
    const changes = events.filter((event) => event.type === 'auth.role.changed');
    const base = { changed_by: tenant.user.id, tenant_id: tenant.tenant.id, role_id: role.id };
    expect(changes.map((event) => event.data)).toEqual([
      expect.objectContaining({ ...base, change: 'created', user_id: null, previous_role: null, new_role: 'ops', permissions: ['users.list'] }),
      expect.objectContaining({
        ...base, change: 'updated', user_id: null, previous_role: 'ops', new_role: 'operations',
        previous_permissions: ['users.list'], permissions: ['users.*'],
      }),
      expect.objectContaining({ ...base, change: 'assigned', user_id: member.userId, previous_role: null, new_role: 'operations' }),
      expect.objectContaining({ ...base, change: 'revoked', user_id: member.userId, previous_role: 'operations', new_role: null }),
      expect.objectContaining({ ...base, change: 'deleted', user_id: null, previous_role: 'operations', new_role: null }),
    ]);
    expect(changes.map((event) => event.partitionKey)).toEqual([role.id, role.id, member.userId, member.userId, role.id]);

    const audit = events.filter((event) => event.type === 'audit.record.created').map((event) => event.data);
    expect(audit.map((record) => record.action)).toEqual([
      'auth.role.created', 'auth.role.updated', 'auth.role.assigned', 'auth.role.revoked', 'auth.role.deleted',
    ]);
    expect(audit[0]).toEqual(expect.objectContaining({ entityType: 'role', entityId: role.id, actorId: tenant.user.id }));
    expect(audit[1].before).toEqual(expect.objectContaining({ name: 'ops' }));
    expect(audit[1].after).toEqual(expect.objectContaining({ name: 'operations' }));
    expect(audit[2].meta).toEqual({ userId: member.userId, roleName: 'operations' });
  });
});
