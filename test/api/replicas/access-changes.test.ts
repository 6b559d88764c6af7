import { createDbPool, type DatabasePool } from '../../../db/pool';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import type { JsonResponse } from '../../helpers/http';
import { get, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { addMember, send, type Member } from '../../helpers/rbac';
import { EnforcementDelays, startReplicas, untilFollowing, type Replicas } from '../../helpers/replicas';

/**
 * RBAC changes made through gateway A bind gateway B within 1 s (docs/decisions/access.md, RBAC
 * versions): B's permission cache (api/runtime/permission-cache.ts), its tenant versions
 * (tenant-versions.ts) and its /auth/me answers (me-cache.ts) are warm when A commits the change,
 * and only PostgreSQL's announcement on its LISTEN connection can tell B. The caches' TTL (30 s) is
 * far beyond the time allowed, so a change seen in time was announced, not expired. B's auth.role.changed
 * consumer is stopped: its early invalidation would otherwise also tell B, and the events of a test's own
 * setup, arriving late on a busy machine, would empty B's cache between warming it and checking it.
 */
jest.setTimeout(60_000);

let replicas: Replicas;
let owner: DatabasePool;
const delays = new EnforcementDelays();

beforeAll(async () => {
  await migrateSharedDatabase();
  [replicas, owner] = await Promise.all([startReplicas(), createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'replicas-access-owner' })]);
  await Promise.all([untilFollowing(replicas.a), untilFollowing(replicas.b)]);
  await replicas.b.runtime.access.roleChanges.stop();
});

afterAll(async () => {
  delays.print('RBAC changes through gateway A, enforced by gateway B');
  await replicas?.close();
  await owner?.end();
});

interface Role {
  id: string;
  permission_ids: string[];
}

/** A tenant whose member holds, besides the built-in member role (no keys), a role `lister` with roles.list and users.list. */
async function memberWithLister(): Promise<{ tenant: RegisteredAccount; member: Member; role: Role }> {
  const { a } = replicas;
  const tenant = await registerAccount(a);
  const role = await send<Role>(a, 'POST', '/roles', tenant.accessToken, { name: 'lister', permission_ids: ['roles.list', 'users.list'] });
  expect(role.status).toBe(201);
  const member = await addMember(a, owner, tenant.tenant.id);
  expect((await send(a, 'POST', `/users/${member.userId}/roles`, tenant.accessToken, { role_id: role.body.id })).status).toBe(200);
  return { tenant, member, role: role.body };
}

const isForbidden = (answer: JsonResponse) => answer.status === 403 && answer.body.type === replicas.b.problemType('forbidden');

describe('an RBAC change made through gateway A', () => {
  it('a permission removed from a role: gateway B, which allowed the request from its cache, refuses it within 1 s', async () => {
    const { a, b } = replicas;
    const { tenant, member, role } = await memberWithLister();
    const listRoles = () => get(b, '/roles', member.token);
    // Twice: the second is answered from B's cache.
    expect((await listRoles()).status).toBe(200);
    const hits = b.runtime.access.cache.stats.hits;
    expect((await listRoles()).status).toBe(200);
    expect(b.runtime.access.cache.stats.hits).toBeGreaterThan(hits);

    const changed = await send<Role>(a, 'PATCH', `/roles/${role.id}`, tenant.accessToken, { permission_ids: ['users.list'] });
    expect(changed.status).toBe(200);
    await delays.measure('permission removed from a role (403 forbidden)', Date.now(), listRoles, isForbidden);
    // Only the removed key: the role's other key still admits the member on B.
    expect((await get(b, '/users', member.token)).status).toBe(200);
  });

  it('a role removed from a user: gateway B refuses what the role allowed and its /auth/me stops listing the role, within 1 s', async () => {
    const { a, b } = replicas;
    const { tenant, member, role } = await memberWithLister();
    const listRoles = () => get(b, '/roles', member.token);
    const me = () => get<{ roles: string[]; permissions: string[] }>(b, '/auth/me', member.token);
    expect((await listRoles()).status).toBe(200);
    expect((await me()).body).toMatchObject({ roles: expect.arrayContaining(['lister']), permissions: expect.arrayContaining(['roles.list']) });
    // Answered from B's caches from now on.
    const meHits = b.runtime.meAnswers.stats.hits;
    expect((await me()).status).toBe(200);
    expect(b.runtime.meAnswers.stats.hits).toBeGreaterThan(meHits);
    expect(b.runtime.access.cache.isCached(tenant.tenant.id)).toBe(true);

    expect((await send(a, 'DELETE', `/users/${member.userId}/roles/${role.id}`, tenant.accessToken)).status).toBe(204);
    const since = Date.now();
    await delays.measure('role removed from a user (403 forbidden)', since, listRoles, isForbidden);
    await delays.measure('role removed from a user (/auth/me without it)', since, me, (answer) => answer.status === 200 && !answer.body.roles.includes('lister'));
    expect((await me()).body).toMatchObject({ roles: ['member'], permissions: [] });
    expect((await get(b, '/users', member.token)).status).toBe(403);
  });
});
