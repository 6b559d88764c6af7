import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import {
  addMembership, bearer, get, GOOD_PASSWORD, outboxEventsOf, post, registerAccount, uniqueEmail,
} from '../../helpers/identity';
import { call } from '../../helpers/http';
import { linkToken, startMailGateway, waitForMail, type MailGateway } from '../../helpers/mail';

/**
 * Invitations (POST /auth/invite, POST /auth/accept-invite) and POST /users with its set-password
 * link, through the whole mail path.
 */
jest.setTimeout(60_000);

let mail: MailGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  mail = await startMailGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'invitations-test-owner' });
});

afterAll(async () => {
  await mail?.close();
  await owner?.end();
});

const invite = (accessToken: string, body: Record<string, unknown>) => post(mail.gateway, '/auth/invite', body, bearer(accessToken));
const accept = (body: Record<string, unknown>) => post(mail.gateway, '/auth/accept-invite', body);

describe('invite and accept-invite', () => {
  it('mails an invitation whose acceptance creates a verified account with the invited role, signed in', async () => {
    const { gateway } = mail;
    const admin = await registerAccount(gateway, { firstName: 'Grace', lastName: 'Hopper', tenantName: 'Compilers' });
    const email = uniqueEmail('invitee');
    const invited = await invite(admin.accessToken, { email, roles: ['admin'] });
    expect(invited.status).toBe(202);
    expect(invited.body).toEqual({ invite_id: expect.any(String), email: email.toLowerCase(), expires_at: expect.any(String) });
    const hours = (Date.parse(String(invited.body.expires_at)) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(71.9);
    expect(hours).toBeLessThanOrEqual(72);

    const message = await waitForMail(email);
    expect(message.subject).toBe('You are invited to Compilers');
    expect(message.text).toContain('Grace Hopper invited you to join Compilers.');
    expect(message.text).toContain(`${gateway.config.mail.linkBaseUrl}/accept-invite?token=`);
    const token = linkToken(message);

    const accepted = await accept({ token, name: 'Ada King Lovelace', password: GOOD_PASSWORD });
    expect(accepted.status).toBe(201);
    expect(accepted.body).toEqual({
      access_token: expect.any(String), refresh_token: expect.any(String), token_type: 'Bearer', expires_in: 900,
      user: { id: expect.any(String), email: email.toLowerCase(), email_verified: true, roles: ['admin'], tenant_id: admin.tenant.id },
    });
    const me = await get(gateway, '/auth/me', String(accepted.body.access_token));
    expect(me.body).toMatchObject({ firstName: 'Ada', lastName: 'King Lovelace', emailVerified: true, roles: ['admin'], tenantId: admin.tenant.id });
    expect((await post(gateway, '/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);

    const created = (await outboxEventsOf(owner, admin.tenant.id)).filter((event) => event.type === 'auth.user.created');
    expect(created.at(-1)).toMatchObject({ data: { email: email.toLowerCase(), role: 'admin', display_name: 'Ada King Lovelace' } });

    // Single use.
    expect((await accept({ token, name: 'Ada', password: GOOD_PASSWORD })).body)
      .toMatchObject({ status: 401, type: gateway.problemType('unauthorized') });
  });

  it('invites as member by default and by role_id', async () => {
    const admin = await registerAccount(mail.gateway);
    const byDefault = uniqueEmail('member');
    expect((await invite(admin.accessToken, { email: byDefault })).status).toBe(202);
    const memberRoleId = await owner.oneFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM roles WHERE tenant_id = ${admin.tenant.id} AND name = 'member'
    `);
    const byId = uniqueEmail('member');
    expect((await invite(admin.accessToken, { email: byId, role_id: memberRoleId })).status).toBe(202);

    for (const email of [byDefault, byId]) {
      const accepted = await accept({ token: linkToken(await waitForMail(email)), name: 'New Member', password: GOOD_PASSWORD });
      expect(accepted.body).toMatchObject({ user: { roles: ['member'] } });
    }
  });

  it('sends an active member a duplicate-invite notice and answers 202 without a body', async () => {
    const { gateway } = mail;
    const admin = await registerAccount(gateway, { tenantName: 'Looms' });
    const member = await registerAccount(gateway);
    await addMembership(owner, admin.tenant.id, member.user.id);

    const response = await invite(admin.accessToken, { email: member.user.email.toUpperCase() });
    expect(response.status).toBe(202);
    expect(response.body).toBe('');
    const notice = await waitForMail(member.user.email, 'You are already a member of Looms');
    expect(notice.text).toContain('where you already have an account');
    expect(notice.text).not.toContain('token=');
    expect(await owner.exists(sql.unsafe`SELECT 1 FROM one_time_tokens WHERE purpose = 'invite' AND email = ${member.user.email}`)).toBe(false);
  });

  it('answers 409 conflict for a deleted member, naming the restore that brings them back', async () => {
    const { gateway } = mail;
    const admin = await registerAccount(gateway, { tenantName: 'Jacquard' });
    const member = await registerAccount(gateway);
    await addMembership(owner, admin.tenant.id, member.user.id);
    const deleted = await call(`${gateway.baseUrl}/v1/users/${member.user.id}`, { method: 'DELETE', headers: bearer(admin.accessToken) });
    expect(deleted.status).toBe(204);

    const response = await invite(admin.accessToken, { email: member.user.email });
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ type: gateway.problemType('conflict') });
    expect(response.body.detail).toContain(`PATCH /v1/users/${member.user.id}/restore`);
    expect(await owner.exists(sql.unsafe`SELECT 1 FROM one_time_tokens WHERE purpose = 'invite' AND email = ${member.user.email}`)).toBe(false);
  });

  it('adds an account of another tenant with its existing password, which does not change', async () => {
    const { gateway } = mail;
    const admin = await registerAccount(gateway);
    const elsewhere = await registerAccount(gateway);
    await invite(admin.accessToken, { email: elsewhere.user.email });
    const token = linkToken(await waitForMail(elsewhere.user.email, `You are invited to ${admin.tenant.name}`));

    const wrongPassword = await accept({ token, name: 'Someone', password: 'not-the-password-123' });
    expect(wrongPassword.body).toMatchObject({ status: 401, type: gateway.problemType('invalid-credentials') });

    const accepted = await accept({ token, name: 'Someone Else', password: elsewhere.password });
    expect(accepted.status).toBe(201);
    expect(accepted.body).toMatchObject({ user: { id: elsewhere.user.id, tenant_id: admin.tenant.id, roles: ['member'], email_verified: true } });
    const tenants = await get(gateway, '/auth/tenants', String(accepted.body.access_token));
    expect((tenants.body.data as { id: string }[]).map((tenant) => tenant.id).sort()).toEqual([admin.tenant.id, elsewhere.tenant.id].sort());
    // The name and password of the account stay as they were.
    expect((await get(gateway, '/auth/me', String(accepted.body.access_token))).body).toMatchObject({ firstName: 'Ada' });
  });

  it('answers 401 token-expired for an invitation past its 72 hours', async () => {
    const admin = await registerAccount(mail.gateway);
    const email = uniqueEmail('late');
    const invited = await invite(admin.accessToken, { email });
    await owner.query(sql.unsafe`UPDATE one_time_tokens SET expires_at = now() - interval '1 second' WHERE id = ${String(invited.body.invite_id)}`);
    const late = await accept({ token: linkToken(await waitForMail(email)), name: 'Late', password: GOOD_PASSWORD });
    expect(late.body).toMatchObject({ status: 401, type: mail.gateway.problemType('token-expired') });
  });

  it('refuses unknown roles, the owner role, both role fields, and callers without users.create', async () => {
    const { gateway } = mail;
    const admin = await registerAccount(gateway);
    const email = uniqueEmail('x');
    expect((await invite(admin.accessToken, { email, roles: ['wizard'] })).body)
      .toMatchObject({ status: 400, errors: [{ field: 'roles', code: 'UNKNOWN_ROLE' }] });
    expect((await invite(admin.accessToken, { email, roles: ['owner'] })).body)
      .toMatchObject({ status: 400, errors: [{ field: 'roles', code: 'OWNER_NOT_ASSIGNABLE' }] });
    expect((await invite(admin.accessToken, { email, role_id: '0190a8f0-0000-7000-8000-000000000000' })).body)
      .toMatchObject({ status: 400, errors: [{ field: 'role_id', code: 'UNKNOWN_ROLE' }] });
    expect((await invite(admin.accessToken, { email, roles: ['member'], role_id: '0190a8f0-0000-7000-8000-000000000000' })).body)
      .toMatchObject({ status: 400, type: gateway.problemType('validation-error') });
    expect((await invite(admin.accessToken, { email: 'not-an-email' })).body).toMatchObject({ status: 400 });
    // UUID spellings joi's bare uuid() takes and PostgreSQL's uuid type refuses (they were 500s).
    for (const roleId of ['0190a8f0:0000:7000:8000:000000000000', '(0190a8f0-0000-7000-8000-000000000000)', '[0190a8f0-0000-7000-8000-000000000000]']) {
      expect((await invite(admin.accessToken, { email: '0@0.com', role_id: roleId })).body)
        .toMatchObject({ status: 400, errors: [{ field: 'role_id', code: 'INVALID_FORMAT' }] });
    }

    // A member holds no users.create.
    const member = await registerAccount(gateway);
    await addMembership(owner, admin.tenant.id, member.user.id);
    const selection = await post(gateway, '/auth/login', { email: member.user.email, password: member.password });
    const session = await post(gateway, '/auth/select-tenant', { sessionToken: selection.body.sessionToken, tenantId: admin.tenant.id });
    expect((await invite(String(session.body.accessToken), { email })).body).toMatchObject({ status: 403, type: gateway.problemType('forbidden') });
    expect((await post(gateway, '/auth/invite', { email })).body).toMatchObject({ status: 401 });
  });
});

describe('POST /users', () => {
  const createUser = (accessToken: string, body: Record<string, unknown>) => post(mail.gateway, '/users', body, bearer(accessToken));

  it('creates the user in the tenant and mails a set-password link redeemed by reset-password', async () => {
    const { gateway } = mail;
    const admin = await registerAccount(gateway, { tenantName: 'Difference Engines' });
    const email = uniqueEmail('created');
    const created = await createUser(admin.accessToken, { email, firstName: 'Charles', lastName: 'Babbage', roles: ['admin'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      email: email.toLowerCase(), firstName: 'Charles', lastName: 'Babbage', tenantId: admin.tenant.id, roles: ['admin'],
      emailVerified: false, status: 'active',
    });
    // No password yet: nothing signs in.
    expect((await post(gateway, '/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(401);

    const message = await waitForMail(email);
    expect(message.subject).toBe('Your account at Difference Engines');
    expect(message.text).toContain(`${gateway.config.mail.linkBaseUrl}/set-password?token=`);
    const hours = await owner.oneFirst(sql.type(z.object({ hours: z.number() }))`
      SELECT round(extract(epoch FROM expires_at - created_at) / 3600)::int AS hours FROM one_time_tokens WHERE email = ${email.toLowerCase()}
    `);
    expect(hours).toBe(72);

    expect((await post(gateway, '/auth/reset-password', { token: linkToken(message), password: GOOD_PASSWORD })).status).toBe(200);
    const login = await post(gateway, '/auth/login', { email, password: GOOD_PASSWORD });
    expect(login.status).toBe(200);
    expect((await get(gateway, '/auth/me', String(login.body.accessToken))).body).toMatchObject({ emailVerified: true, roles: ['admin'] });
  });

  it('answers 409 for an address that already has an account, and 403 without users.create', async () => {
    const { gateway } = mail;
    const admin = await registerAccount(gateway);
    const existing = await registerAccount(gateway);
    expect((await createUser(admin.accessToken, { email: existing.user.email, firstName: 'A', lastName: 'B' })).body)
      .toMatchObject({ status: 409, type: gateway.problemType('conflict') });
    expect((await createUser(admin.accessToken, { email: uniqueEmail(), firstName: 'A' })).body)
      .toMatchObject({ status: 400, errors: [{ field: 'lastName', code: 'REQUIRED' }] });
  });
});
