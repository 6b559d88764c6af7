import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { registerAccount } from '../../helpers/identity';
import { addMember, send } from '../../helpers/rbac';

/**
 * docs/reference/access.md#rule-19: roles per user, permissions per role, roles per tenant → 400
 * rbac-limit-exceeded, also when the requests race (the tenant's RBAC lock serializes them). The
 * limits are lowered through configuration; a tenant starts with its 3 built-in roles.
 */

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway({
    env: { RBAC_MAX_ROLES_PER_USER: '3', RBAC_MAX_PERMISSIONS_PER_ROLE: '4', RBAC_MAX_ROLES_PER_TENANT: '5' },
  });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'roles-limits-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

const keys = ['users.list', 'users.create', 'users.update', 'users.delete', 'roles.list'];

describe('RBAC limits', () => {
  it('refuses a role with more permissions than RBAC_MAX_PERMISSIONS_PER_ROLE, on create and update', async () => {
    const tenant = await registerAccount(gateway);
    const tooMany = await send(gateway, 'POST', '/roles', tenant.accessToken, { name: 'big', permission_ids: keys });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.type).toBe(gateway.problemType('rbac-limit-exceeded'));
    expect(tooMany.body.detail).toMatch(/RBAC_MAX_PERMISSIONS_PER_ROLE/);

    const fits = await send<{ id: string }>(gateway, 'POST', '/rbac/roles', tenant.accessToken, { name: 'big', permissions: keys.slice(0, 4) });
    expect(fits.status).toBe(201);
    const grown = await send(gateway, 'PUT', `/rbac/roles/${fits.body.id}`, tenant.accessToken, { name: 'big', permissions: keys });
    expect(grown.body.type).toBe(gateway.problemType('rbac-limit-exceeded'));
  });

  it('lets exactly RBAC_MAX_ROLES_PER_TENANT roles exist when creations race', async () => {
    const tenant = await registerAccount(gateway);
    const attempts = await Promise.all(Array.from({ length: 6 }, (_, i) => (
      send(gateway, 'POST', '/roles', tenant.accessToken, { name: `racer-${i}`, permission_ids: [] })
    )));
    const statuses = attempts.map((attempt) => attempt.status).sort();
    expect(statuses).toEqual([201, 201, 400, 400, 400, 400]);
    for (const refused of attempts.filter((attempt) => attempt.status === 400)) {
      expect(refused.body.type).toBe(gateway.problemType('rbac-limit-exceeded'));
    }
    const listed = await send<{ data: unknown[] }>(gateway, 'GET', '/roles', tenant.accessToken);
    expect(listed.body.data).toHaveLength(5);
  });

  it('lets a user hold at most RBAC_MAX_ROLES_PER_USER roles when assignments race', async () => {
    const tenant = await registerAccount(gateway);
    const member = await addMember(gateway, owner, tenant.tenant.id);
    const roles = await Promise.all(['r1', 'r2'].map(async (name) => (
      (await send<{ id: string }>(gateway, 'POST', '/roles', tenant.accessToken, { name, permission_ids: [] })).body.id
    )));
    const admin = (await send<{ data: { id: string; name: string }[] }>(gateway, 'GET', '/roles', tenant.accessToken))
      .body.data.find((role) => role.name === 'admin')!.id;
    // The member holds `member`; three more assignments race for the two places left.
    const attempts = await Promise.all([...roles, admin].map((roleId) => (
      send(gateway, 'POST', `/rbac/roles/${roleId}/assign`, tenant.accessToken, { user_id: member.userId })
    )));
    expect(attempts.map((attempt) => attempt.status).sort()).toEqual([200, 200, 400]);
    expect(attempts.find((attempt) => attempt.status === 400)!.body.type).toBe(gateway.problemType('rbac-limit-exceeded'));
    const effective = await send<{ roles: string[] }>(gateway, 'GET', `/rbac/users/${member.userId}/permissions`, tenant.accessToken);
    expect(effective.body.roles).toHaveLength(3);
  });
});
