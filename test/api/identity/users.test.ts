import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import { selectAccountReach } from '../../../db/queries/identity/members.queries';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { addMembership, post, registerAccount } from '../../helpers/identity';
import { auditRecordsOf, createMember, login, outboxOfType, send } from '../../helpers/users';

/** Users of a tenant (docs/reference/identity.md, rules 29 to 33): CRUD in the caller's tenant, soft delete and restore, events and audit records. */
let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'users-test-owner' });
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

interface UserBody {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  status: string;
  roles: string[];
  emailVerified: boolean;
  deletedAt: string | null;
  permissions?: string[];
}

interface Page {
  data: UserBody[];
  next_page_token?: string;
}

/** A tenant with its owner, an admin and a member, each signed in. */
async function tenantWithStaff() {
  const account = await registerAccount(gateway);
  const admin = await createMember(owner, account.tenant.id, 'admin');
  const member = await createMember(owner, account.tenant.id, 'member');
  return {
    account,
    admin: { ...admin, token: (await login(gateway, admin)).accessToken },
    member: { ...member, token: (await login(gateway, member)).accessToken },
  };
}

describe('GET /users', () => {
  it('lists the tenant’s users in the page envelope, a page at a time', async () => {
    const { account, admin, member } = await tenantWithStaff();
    const all = await send<Page>(gateway, 'GET', '/users', account.accessToken);
    expect(all.status).toBe(200);
    expect(all.body.data.map((u) => u.id)).toEqual([account.user.id, admin.id, member.id]);
    expect(all.body.next_page_token).toBeUndefined();
    expect(all.body.data[1]).toMatchObject({ email: admin.email, roles: ['admin'], status: 'active', tenantId: account.tenant.id, deletedAt: null });

    const seen: string[] = [];
    let token: string | undefined;
    do {
      const query = token ? `?page_size=2&page_token=${token}` : '?page_size=2';
      const page = await send<Page>(gateway, 'GET', `/users${query}`, admin.token);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((u) => u.id));
      token = page.body.next_page_token;
    } while (token);
    expect(seen).toEqual([account.user.id, admin.id, member.id]);
  });

  it('filters by status and by part of the e-mail address', async () => {
    const { account, admin, member } = await tenantWithStaff();
    await send(gateway, 'PATCH', `/users/${member.id}`, account.accessToken, { status: 'locked' });
    const locked = await send<Page>(gateway, 'GET', '/users?status=locked', account.accessToken);
    expect(locked.body.data.map((u) => u.id)).toEqual([member.id]);
    const byEmail = await send<Page>(gateway, 'GET', `/users?email=${encodeURIComponent(admin.email.slice(0, 20).toUpperCase())}`, account.accessToken);
    expect(byEmail.body.data.map((u) => u.id)).toEqual([admin.id]);
  });

  it('refuses a page_size above 100, an unknown parameter and a token it did not issue', async () => {
    const { account } = await tenantWithStaff();
    const tooBig = await send(gateway, 'GET', '/users?page_size=101', account.accessToken);
    expect(tooBig.body).toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'page_size', code: 'OUT_OF_RANGE' })] });
    expect((await send(gateway, 'GET', '/users?sort=email', account.accessToken)).status).toBe(400);
    const forged = await send(gateway, 'GET', `/users?page_token=${Buffer.from('after:nope').toString('base64url')}`, account.accessToken);
    expect(forged.body).toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'page_token' })] });
  });
});

describe('permissions', () => {
  it('lets the owner and an admin in, refuses a member (403) and an anonymous caller (401)', async () => {
    const { account, admin, member } = await tenantWithStaff();
    for (const token of [account.accessToken, admin.token]) {
      expect((await send(gateway, 'GET', '/users', token)).status).toBe(200);
      expect((await send(gateway, 'GET', `/users/${member.id}`, token)).status).toBe(200);
      expect((await send(gateway, 'GET', `/users/${member.id}/permissions`, token)).status).toBe(200);
    }
    const routes: ['GET' | 'PATCH' | 'DELETE', string, unknown?][] = [
      ['GET', '/users'], ['GET', `/users/${admin.id}`], ['GET', `/users/${admin.id}/permissions`],
      ['PATCH', `/users/${admin.id}`, { firstName: 'X' }], ['DELETE', `/users/${admin.id}`], ['PATCH', `/users/${admin.id}/restore`],
    ];
    for (const [method, path, body] of routes) {
      const refused = await send(gateway, method, path, member.token, body);
      expect(refused.body).toMatchObject({ status: 403, type: gateway.problemType('forbidden') });
      expect((await send(gateway, method, path, undefined, body)).status).toBe(401);
    }
    // Nothing the member tried changed the admin.
    const adminNow = await send<UserBody>(gateway, 'GET', `/users/${admin.id}`, account.accessToken);
    expect(adminNow.body).toMatchObject({ firstName: 'Grace', deletedAt: null });
  });

  it('answers 404 for a user of another tenant, exactly as for an unknown id', async () => {
    const a = await tenantWithStaff();
    const b = await registerAccount(gateway);
    const unknown = '0190a0a0-0000-7000-8000-000000000000';
    for (const id of [a.member.id, a.account.user.id, unknown]) {
      for (const [method, path, body] of [
        ['GET', `/users/${id}`], ['GET', `/users/${id}/permissions`], ['PATCH', `/users/${id}`, { firstName: 'Eve' }],
        ['DELETE', `/users/${id}`], ['PATCH', `/users/${id}/restore`],
      ] as const) {
        const response = await send(gateway, method, path, b.accessToken, body);
        expect(response.body).toMatchObject({ status: 404, type: gateway.problemType('not-found') });
      }
    }
    const list = await send<Page>(gateway, 'GET', '/users?include_deleted=true', b.accessToken);
    expect(list.body.data.map((u) => u.id)).toEqual([b.user.id]);
    expect((await send<UserBody>(gateway, 'GET', `/users/${a.member.id}`, a.account.accessToken)).body.firstName).toBe('Grace');
  });
});

describe('GET /users/:id and /users/:id/permissions', () => {
  it('shows the roles and the union of their permissions', async () => {
    const { account, admin } = await tenantWithStaff();
    const details = await send<UserBody>(gateway, 'GET', `/users/${admin.id}`, account.accessToken);
    expect(details.body).toMatchObject({ id: admin.id, roles: ['admin'], emailVerified: false, status: 'active' });
    expect(details.body.permissions).toContain('users.delete');
    expect(details.body.permissions).not.toContain('system.backup');
    const permissions = await send(gateway, 'GET', `/users/${admin.id}/permissions`, account.accessToken);
    expect(permissions.body).toEqual({ user_id: admin.id, roles: ['admin'], permissions: details.body.permissions });
    const ofOwner = await send(gateway, 'GET', `/users/${account.user.id}/permissions`, admin.token);
    expect(ofOwner.body).toEqual({ user_id: account.user.id, roles: ['owner'], permissions: ['*'] });
  });

  it('refuses an id that is not a UUID', async () => {
    const { account } = await tenantWithStaff();
    const response = await send(gateway, 'GET', '/users/42', account.accessToken);
    expect(response.body).toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'id', code: 'INVALID_FORMAT' })] });
  });
});

describe('PATCH /users/:id', () => {
  it('changes names and e-mail (lower case, unverified again) with a sparse auth.user.updated and an audit record', async () => {
    const { account, admin, member } = await tenantWithStaff();
    await owner.query(sql.unsafe`UPDATE users SET email_verified = true WHERE id = ${member.id}`);
    const newEmail = `Renamed.${member.id}@Example.TEST`;
    const response = await send<UserBody>(gateway, 'PATCH', `/users/${member.id}`, admin.token, { email: newEmail });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ email: newEmail.toLowerCase(), emailVerified: false, firstName: 'Grace' });
    const renamed = await send<UserBody>(gateway, 'PATCH', `/users/${member.id}`, admin.token, { firstName: 'Ada', lastName: 'King' });
    expect(renamed.body).toMatchObject({ firstName: 'Ada', lastName: 'King' });

    const events = await outboxOfType(owner, account.tenant.id, 'auth.user.updated');
    expect(events.map((e) => e.data)).toEqual([
      { user_id: member.id, tenant_id: account.tenant.id, email: newEmail.toLowerCase(), updated_by: admin.id, updated_at: expect.any(String) },
      { user_id: member.id, tenant_id: account.tenant.id, display_name: 'Ada King', updated_by: admin.id, updated_at: expect.any(String) },
    ]);
    expect(events.every((e) => e.partitionKey === member.id)).toBe(true);
    const audits = await auditRecordsOf(owner, account.tenant.id, 'auth.user.updated');
    expect(audits).toHaveLength(2);
    expect(audits[1]).toMatchObject({
      entityType: 'user', entityId: member.id, actorId: admin.id, impersonatorId: null,
      before: expect.objectContaining({ firstName: 'Grace', lastName: 'Hopper' }), after: expect.objectContaining({ firstName: 'Ada', lastName: 'King' }),
    });
    // The new address signs in; the old one no longer does.
    expect((await post(gateway, '/auth/login', { email: newEmail, password: member.password })).status).toBe(200);
    expect((await post(gateway, '/auth/login', { email: member.email, password: member.password })).status).toBe(401);
  });

  it('writes nothing when nothing changes', async () => {
    const { account, member } = await tenantWithStaff();
    const same = await send<UserBody>(gateway, 'PATCH', `/users/${member.id}`, account.accessToken, { firstName: 'Grace', status: 'active' });
    expect(same.status).toBe(200);
    expect(await outboxOfType(owner, account.tenant.id, 'auth.user.updated')).toEqual([]);
  });

  it('answers 409 conflict for an address another account has, and changes nothing', async () => {
    const { account, member } = await tenantWithStaff();
    const other = await registerAccount(gateway);
    const response = await send(gateway, 'PATCH', `/users/${member.id}`, account.accessToken, { email: other.user.email.toUpperCase(), firstName: 'Zed' });
    expect(response.body).toMatchObject({ status: 409, type: gateway.problemType('conflict') });
    expect((await send<UserBody>(gateway, 'GET', `/users/${member.id}`, account.accessToken)).body).toMatchObject({ email: member.email, firstName: 'Grace' });
  });

  it('refuses bad bodies: empty, unknown field, wrong type, invalid e-mail, a status it does not set, too long', async () => {
    const { account, member } = await tenantWithStaff();
    const cases: [unknown, string, string][] = [
      [{}, 'body', 'TOO_SHORT'],
      [{ role: 'owner' }, 'role', 'UNKNOWN_FIELD'],
      [{ firstName: 7 }, 'firstName', 'INVALID_TYPE'],
      [{ email: 'not-an-address' }, 'email', 'INVALID_FORMAT'],
      [{ status: 'pending_deletion' }, 'status', 'INVALID_VALUE'],
      [{ lastName: 'x'.repeat(101) }, 'lastName', 'TOO_LONG'],
    ];
    for (const [body, field, code] of cases) {
      const response = await send(gateway, 'PATCH', `/users/${member.id}`, account.accessToken, body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(response.body).toMatchObject({ errors: [expect.objectContaining({ field, code })] });
    }
  });

  it('locks a user in this tenant: its sessions end and login is refused until it is active again', async () => {
    const { account, member } = await tenantWithStaff();
    const session = await login(gateway, member);
    const locked = await send<UserBody>(gateway, 'PATCH', `/users/${member.id}`, account.accessToken, { status: 'locked' });
    expect(locked.body.status).toBe('locked');
    expect((await post(gateway, '/auth/refresh', { refreshToken: session.refreshToken })).status).toBe(401);
    expect((await post(gateway, '/auth/login', { email: member.email, password: member.password })).status).toBe(403);
    const [event] = await outboxOfType(owner, account.tenant.id, 'auth.user.updated');
    expect(event.data).toMatchObject({ is_active: false, updated_by: account.user.id });

    const active = await send<UserBody>(gateway, 'PATCH', `/users/${member.id}`, account.accessToken, { status: 'active' });
    expect(active.body.status).toBe('active');
    expect((await post(gateway, '/auth/login', { email: member.email, password: member.password })).status).toBe(200);
  });

  it('protects the owner and the caller itself, and accounts shared with other tenants', async () => {
    const { account, admin, member } = await tenantWithStaff();
    const cases: [string, string, unknown][] = [
      [admin.token, account.user.id, { status: 'locked' }],
      [admin.token, account.user.id, { email: `taken-over.${admin.id}@example.test` }],
      [admin.token, admin.id, { status: 'locked' }],
    ];
    for (const [token, id, body] of cases) {
      expect((await send(gateway, 'PATCH', `/users/${id}`, token, body)).body).toMatchObject({ status: 403, type: gateway.problemType('forbidden') });
    }
    // An account that also belongs to another tenant: its holder's name and e-mail are not this tenant's to change,
    // while locking it here is.
    const outsider = await registerAccount(gateway);
    await addMembership(owner, account.tenant.id, outsider.user.id, 'member');
    expect((await send(gateway, 'PATCH', `/users/${outsider.user.id}`, admin.token, { firstName: 'Mallory' })).status).toBe(403);
    expect((await send<UserBody>(gateway, 'PATCH', `/users/${outsider.user.id}`, admin.token, { status: 'locked' })).body.status).toBe('locked');
    // The owner changes its own account, and the admin its own name.
    expect((await send<UserBody>(gateway, 'PATCH', `/users/${account.user.id}`, account.accessToken, { firstName: 'Augusta' })).body.firstName).toBe('Augusta');
    expect((await send<UserBody>(gateway, 'PATCH', `/users/${admin.id}`, admin.token, { lastName: 'Self' })).body.lastName).toBe('Self');
    expect((await send<UserBody>(gateway, 'GET', `/users/${member.id}`, admin.token)).body.status).toBe('active');
  });
});

const accountRow = z.object({ email: z.string(), deletedAt: z.string().nullable(), firstName: z.string() });
const accountOf = (userId: string) => owner.one(sql.type(accountRow)`
  SELECT email, deleted_at AS "deletedAt", first_name AS "firstName" FROM users WHERE id = ${userId}
`);

describe('DELETE /users/:id and PATCH /users/:id/restore', () => {
  it('soft-deletes: 204, login blocked, sessions ended, data kept; restore re-enables login', async () => {
    const { account, admin, member } = await tenantWithStaff();
    const session = await login(gateway, member);
    const deleted = await send(gateway, 'DELETE', `/users/${member.id}`, admin.token);
    expect(deleted.status).toBe(204);

    expect((await post(gateway, '/auth/login', { email: member.email, password: member.password })).body)
      .toMatchObject({ status: 401, type: gateway.problemType('invalid-credentials') });
    expect((await post(gateway, '/auth/refresh', { refreshToken: session.refreshToken })).status).toBe(401);
    expect((await accountOf(member.id))).toMatchObject({ email: member.email, firstName: 'Grace', deletedAt: expect.any(String) });
    const shown = await send<UserBody>(gateway, 'GET', `/users/${member.id}`, admin.token);
    expect(shown.body).toMatchObject({ id: member.id, roles: ['member'], deletedAt: expect.any(String) });
    expect((await send<Page>(gateway, 'GET', '/users', admin.token)).body.data.map((u) => u.id)).not.toContain(member.id);
    expect((await send<Page>(gateway, 'GET', '/users?include_deleted=true', admin.token)).body.data.map((u) => u.id)).toContain(member.id);
    // A deleted user is restored before it is changed.
    expect((await send(gateway, 'PATCH', `/users/${member.id}`, admin.token, { firstName: 'Z' })).status).toBe(409);

    const [event] = await outboxOfType(owner, account.tenant.id, 'auth.user.deleted');
    expect(event).toEqual({
      type: 'auth.user.deleted', partitionKey: member.id,
      data: { user_id: member.id, tenant_id: account.tenant.id, deleted_by: admin.id, deleted_at: shown.body.deletedAt, account_deleted: true },
    });
    expect(await auditRecordsOf(owner, account.tenant.id, 'auth.user.deleted')).toEqual([
      expect.objectContaining({ entityId: member.id, actorId: admin.id, after: null, before: expect.objectContaining({ email: member.email }) }),
    ]);
    // Deleting again changes nothing.
    expect((await send(gateway, 'DELETE', `/users/${member.id}`, admin.token)).status).toBe(204);
    expect(await outboxOfType(owner, account.tenant.id, 'auth.user.deleted')).toHaveLength(1);

    const restored = await send<UserBody>(gateway, 'PATCH', `/users/${member.id}/restore`, admin.token);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id: member.id, deletedAt: null, status: 'active', roles: ['member'] });
    expect((await accountOf(member.id)).deletedAt).toBeNull();
    expect((await post(gateway, '/auth/login', { email: member.email, password: member.password })).status).toBe(200);
    const updates = await outboxOfType(owner, account.tenant.id, 'auth.user.updated');
    expect(updates.map((e) => e.data)).toEqual([expect.objectContaining({ user_id: member.id, is_active: true, updated_by: admin.id })]);
    expect(await auditRecordsOf(owner, account.tenant.id, 'auth.user.restored')).toHaveLength(1);
    // Restoring an active user changes nothing.
    expect((await send(gateway, 'PATCH', `/users/${member.id}/restore`, admin.token)).status).toBe(200);
    expect(await outboxOfType(owner, account.tenant.id, 'auth.user.updated')).toHaveLength(1);
  });

  it('deletes only the membership of an account that belongs to other tenants too', async () => {
    const { account } = await tenantWithStaff();
    const other = await registerAccount(gateway);
    await addMembership(owner, account.tenant.id, other.user.id, 'member');
    expect((await send(gateway, 'DELETE', `/users/${other.user.id}`, account.accessToken)).status).toBe(204);
    expect((await accountOf(other.user.id)).deletedAt).toBeNull();
    // The account still signs in, into its other tenant only.
    const signedIn = await login(gateway, { email: other.user.email, password: other.password });
    expect(signedIn.accessToken).toBeDefined();
    const tenants = await send<{ data: { id: string }[] }>(gateway, 'GET', '/auth/tenants', signedIn.accessToken);
    expect(tenants.body.data.map((t) => t.id)).toEqual([other.tenant.id]);
    expect((await post(gateway, '/auth/switch-tenant', { tenantId: account.tenant.id }, { authorization: `Bearer ${signedIn.accessToken}` })).status).toBe(404);
    const [event] = await outboxOfType(owner, account.tenant.id, 'auth.user.deleted');
    expect(event.data).toMatchObject({ account_deleted: false });
  });

  it('never deletes the owner or the caller itself', async () => {
    const { account, admin } = await tenantWithStaff();
    expect((await send(gateway, 'DELETE', `/users/${account.user.id}`, admin.token)).body).toMatchObject({ status: 403 });
    expect((await send(gateway, 'DELETE', `/users/${account.user.id}`, account.accessToken)).body).toMatchObject({ status: 403 });
    expect((await send(gateway, 'DELETE', `/users/${admin.id}`, admin.token)).body).toMatchObject({ status: 403 });
    expect(await outboxOfType(owner, account.tenant.id, 'auth.user.deleted')).toEqual([]);
  });
});

describe('users_account_reach (migration 0007)', () => {
  it('counts an account’s other and live memberships for its own tenants only, and nothing for a stranger', async () => {
    const a = await registerAccount(gateway);
    const b = await registerAccount(gateway);
    await addMembership(owner, b.tenant.id, a.user.id, 'member');
    const app = await createDbPool(appUrl(), { maxPoolSize: 1, name: 'users-test-app' });
    try {
      expect(await withTenant(app, b.tenant.id, (tx) => selectAccountReach(tx, a.user.id))).toEqual({ otherTenants: 1, liveMemberships: 2 });
      // Tenant B asks about B's owner, who is no member of A, from A's side: nothing.
      expect(await withTenant(app, a.tenant.id, (tx) => selectAccountReach(tx, b.user.id))).toEqual({ otherTenants: 0, liveMemberships: 0 });
    } finally {
      await app.end();
    }
  });
});
