import { newId } from '../../../common/ids';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { markOrphans } from '../../../services/files/orphans';
import { appUrl } from '../../helpers/db';
import { makeAvailable, setStatus, upload, uploadParts, type FileObject, type Problem } from '../../helpers/files';
import { useFilesApiStack } from '../../helpers/files-api';
import { orphanedAtOf, referencesOf, setOrphanedAt } from '../../helpers/files-orphans';
import { samplePng } from '../../helpers/files-scan';
import { call } from '../../helpers/http';
import { addMembership, bearer, post, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { auditRecordsOf, createMember, login, outboxOfType, send } from '../../helpers/users';

/**
 * A user's avatar from a platform file (services/identity/users/avatar.ts) through the real gateway,
 * PostgreSQL and object store: PUT/DELETE /auth/me/avatar for the caller, PATCH /users/:id
 * {avatarFileId} for an admin. Files are uploaded through the API and made available directly (the
 * scan is another test's subject; the gateway's scans go to a task queue no worker polls).
 */
jest.setTimeout(60_000);

const stack = useFilesApiStack('identity-avatar-test');
let app: DatabasePool;
let png: Buffer;

beforeAll(async () => {
  [app, png] = await Promise.all([createDbPool(appUrl(), { maxPoolSize: 2, name: 'identity-avatar-test-app' }), samplePng(96, 96)]);
});

afterAll(async () => {
  await app?.end();
});

interface UserBody { id: string; avatarUrl: string | null; firstName: string; permissions?: string[] }

/** A fresh tenant: its owner, and a member (no users.update, no files.*) signed in. */
async function tenantWithMember() {
  const account = await registerAccount(stack.gateway);
  const member = await createMember(stack.owner, account.tenant.id, 'member');
  return { account, tenantId: account.tenant.id, member: { ...member, token: (await login(stack.gateway, member)).accessToken } };
}

/** A file uploaded by the tenant's owner (a member may not upload), available unless `pending`. */
async function uploaded(
  account: RegisteredAccount, options: { bucket?: string; mimeType?: string; pending?: boolean } = {},
): Promise<FileObject> {
  const { bucket = 'avatars', mimeType = 'image/png', pending = false } = options;
  const response = await upload(stack.gateway, account.accessToken, uploadParts(png, { bucket, mimeType }, 'me.png'));
  expect(response.status).toBe(201);
  if (!pending) await makeAvailable(stack.owner, stack.store, response.body, png);
  return response.body;
}

const urlOf = (userId: string, file: Pick<FileObject, 'id'>) => `/v1/users/${userId}/avatar?v=${file.id}`;
const setAvatar = (token: string, fileId: unknown) => send<UserBody & Problem>(stack.gateway, 'PUT', '/auth/me/avatar', token, { fileId });
const clearAvatar = (token: string) => send<UserBody & Problem>(stack.gateway, 'DELETE', '/auth/me/avatar', token);
const meOf = async (token: string) => (await send<UserBody>(stack.gateway, 'GET', '/auth/me', token)).body;
const avatarRefs = async (tenantId: string) => (await referencesOf(stack.owner, tenantId)).filter((ref) => ref.referrer === 'user.avatar');
const updatesOf = async (tenantId: string, userId: string) => (await outboxOfType(stack.owner, tenantId, 'auth.user.updated'))
  .filter((event) => event.data.user_id === userId);
/** GET of a stored avatarUrl as a client would follow it; redirects are not followed. */
const fetchAvatar = (avatarUrl: string, token: string) => call(`${stack.gateway.baseUrl}${avatarUrl}`, { headers: bearer(token), redirect: 'manual' });

function expectFieldError(response: { status: number; body: Problem }, field: string, code: string): void {
  expect(response.status).toBe(400);
  expect(response.body.type).toBe(stack.gateway.problemType('validation-error'));
  expect(response.body.errors).toEqual([expect.objectContaining({ field, code })]);
}

describe('PUT and DELETE /auth/me/avatar', () => {
  it('lets a member without users.update set, replace and clear its own avatar, with its reference, event and audit record', async () => {
    const { account, tenantId, member } = await tenantWithMember();
    const first = await uploaded(account);

    const set = await setAvatar(member.token, first.id);
    expect(set.status).toBe(200);
    // The User as PATCH /users/:id answers it: no permissions.
    expect(set.body).toMatchObject({ id: member.id, avatarUrl: urlOf(member.id, first), tenantId });
    expect(set.body.permissions).toBeUndefined();
    expect((await meOf(member.token)).avatarUrl).toBe(urlOf(member.id, first));
    expect((await send<UserBody>(stack.gateway, 'GET', `/users/${member.id}`, account.accessToken)).body.avatarUrl).toBe(urlOf(member.id, first));
    expect(await avatarRefs(tenantId)).toEqual([{ referrer: 'user.avatar', referrerId: member.id, fileId: first.id }]);
    // UserUpdatedEvent has no avatar field: the event carries none of its optional fields.
    const [event] = await updatesOf(tenantId, member.id);
    expect(event.data).toEqual({ user_id: member.id, tenant_id: tenantId, updated_by: member.id, updated_at: expect.any(String) });
    const [audit] = (await auditRecordsOf(stack.owner, tenantId, 'auth.user.updated')).filter((record) => record.entityId === member.id);
    expect(audit).toMatchObject({ actorId: member.id, before: { avatarUrl: null }, after: { avatarUrl: urlOf(member.id, first) } });

    // The stored address shows the face to any member of the tenant, files.read or not, and to no one else.
    for (const token of [account.accessToken, member.token]) {
      const shown = await fetchAvatar(set.body.avatarUrl!, token);
      expect(shown.status).toBe(302);
      expect(shown.headers.get('location')).toContain('/thumbnails/avatar_64.webp');
    }
    expect((await fetchAvatar(set.body.avatarUrl!, stack.stranger.accessToken)).status).toBe(404);

    // The same file again changes nothing and writes nothing.
    const again = await setAvatar(member.token, first.id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(set.body);
    expect(await updatesOf(tenantId, member.id)).toHaveLength(1);

    const second = await uploaded(account);
    expect((await setAvatar(member.token, second.id)).body.avatarUrl).toBe(urlOf(member.id, second));
    expect(await avatarRefs(tenantId)).toEqual([{ referrer: 'user.avatar', referrerId: member.id, fileId: second.id }]);

    const cleared = await clearAvatar(member.token);
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ id: member.id, avatarUrl: null });
    expect((await meOf(member.token)).avatarUrl).toBeNull();
    expect(await avatarRefs(tenantId)).toEqual([]);
    expect((await fetchAvatar(urlOf(member.id, second), member.token)).status).toBe(404);
    expect(await updatesOf(tenantId, member.id)).toHaveLength(3);
    // Nothing to clear: nothing written.
    expect((await clearAvatar(member.token)).body.avatarUrl).toBeNull();
    expect(await updatesOf(tenantId, member.id)).toHaveLength(3);
  });

  it('takes a file still being scanned; its address answers 404 until the scan has passed', async () => {
    const { account, member } = await tenantWithMember();
    const pending = await uploaded(account, { pending: true });
    expect((await setAvatar(member.token, pending.id)).body.avatarUrl).toBe(urlOf(member.id, pending));
    expect((await fetchAvatar(urlOf(member.id, pending), account.accessToken)).status).toBe(404);
    await makeAvailable(stack.owner, stack.store, pending, png);
    expect((await fetchAvatar(urlOf(member.id, pending), account.accessToken)).status).toBe(302);
  });

  it('answers 400 FILE_NOT_FOUND for an unknown, another tenant\'s or a rejected file and FILE_NOT_AVATAR for a document or a non-image, changing nothing', async () => {
    const { account, tenantId, member } = await tenantWithMember();
    const kept = await uploaded(account);
    expect((await setAvatar(member.token, kept.id)).status).toBe(200);
    const rejected = await uploaded(account);
    await setStatus(stack.owner, rejected.id, 'rejected');
    const cases: [fileId: string, code: string][] = [
      [newId(), 'FILE_NOT_FOUND'],
      [(await uploaded(stack.stranger)).id, 'FILE_NOT_FOUND'],
      [rejected.id, 'FILE_NOT_FOUND'],
      [(await uploaded(account, { bucket: 'documents' })).id, 'FILE_NOT_AVATAR'],
      [(await uploaded(account, { mimeType: 'application/pdf' })).id, 'FILE_NOT_AVATAR'],
    ];
    for (const [fileId, code] of cases) {
      expectFieldError(await setAvatar(member.token, fileId), 'fileId', code);
      expectFieldError(await send(stack.gateway, 'PATCH', `/users/${member.id}`, account.accessToken, { avatarFileId: fileId }), 'avatarFileId', code);
    }
    expect((await meOf(member.token)).avatarUrl).toBe(urlOf(member.id, kept));
    expect(await avatarRefs(tenantId)).toEqual([{ referrer: 'user.avatar', referrerId: member.id, fileId: kept.id }]);
    expect(await updatesOf(tenantId, member.id)).toHaveLength(1);

    // The body's shape: a UUID, required (DELETE clears); a bearer token.
    for (const body of [{ fileId: null }, { fileId: 'me.png' }, {}]) expect((await send(stack.gateway, 'PUT', '/auth/me/avatar', member.token, body)).status).toBe(400);
    expect((await send(stack.gateway, 'PUT', '/auth/me/avatar', undefined, { fileId: kept.id })).status).toBe(401);
    expect((await send(stack.gateway, 'DELETE', '/auth/me/avatar')).status).toBe(401);
  });
});

describe('PATCH /users/:id {avatarFileId}', () => {
  it('lets an admin set and clear another user\'s avatar, with the name in the same change', async () => {
    const { account, tenantId, member } = await tenantWithMember();
    const admin = await createMember(stack.owner, tenantId, 'admin');
    const adminToken = (await login(stack.gateway, admin)).accessToken;
    const file = await uploaded(account);

    const patched = await send<UserBody>(stack.gateway, 'PATCH', `/users/${member.id}`, adminToken, { avatarFileId: file.id, firstName: 'Ada' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ avatarUrl: urlOf(member.id, file), firstName: 'Ada' });
    expect((await meOf(member.token)).avatarUrl).toBe(urlOf(member.id, file));
    expect(await avatarRefs(tenantId)).toEqual([{ referrer: 'user.avatar', referrerId: member.id, fileId: file.id }]);
    const [event] = await updatesOf(tenantId, member.id);
    expect(event.data).toMatchObject({ display_name: 'Ada Hopper', updated_by: admin.id });

    expect((await send<UserBody>(stack.gateway, 'PATCH', `/users/${member.id}`, adminToken, { avatarFileId: null })).body.avatarUrl).toBeNull();
    expect(await avatarRefs(tenantId)).toEqual([]);
    // A member lacks users.update.
    expect((await send(stack.gateway, 'PATCH', `/users/${member.id}`, member.token, { avatarFileId: file.id })).status).toBe(403);
  });

  it('leaves the avatar of an account shared with another tenant to its holder; the file stays in the tenant it was set from', async () => {
    const { account, tenantId } = await tenantWithMember();
    const outsider = await registerAccount(stack.gateway);
    await addMembership(stack.owner, tenantId, outsider.user.id, 'member');
    const file = await uploaded(account);
    expect((await send(stack.gateway, 'PATCH', `/users/${outsider.user.id}`, account.accessToken, { avatarFileId: file.id })).status).toBe(403);

    // The holder sets it from this tenant: its own tenant shows the address, and cannot fetch it.
    const switched = await post<{ accessToken: string }>(stack.gateway, '/auth/switch-tenant', { tenantId }, bearer(outsider.accessToken));
    expect((await setAvatar(switched.body.accessToken, file.id)).status).toBe(200);
    expect(await avatarRefs(tenantId)).toEqual([{ referrer: 'user.avatar', referrerId: outsider.user.id, fileId: file.id }]);
    expect((await meOf(outsider.accessToken)).avatarUrl).toBe(urlOf(outsider.user.id, file));
    expect((await fetchAvatar(urlOf(outsider.user.id, file), outsider.accessToken)).status).toBe(404);
  });
});

describe('the orphan sweep and avatars', () => {
  it('does not mark a file that is an avatar; the avatar\'s reference clears an earlier mark', async () => {
    const { account, tenantId, member } = await tenantWithMember();
    const [avatar, spare] = [await uploaded(account), await uploaded(account)];
    await setOrphanedAt(stack.owner, { fileId: avatar.id }, Date.now());
    expect((await setAvatar(member.token, avatar.id)).status).toBe(200);
    expect(await orphanedAtOf(stack.owner, { fileId: avatar.id })).toBeNull();

    // Both uploaded past the sweep's grace; the marking step runs as the sweep's activity does (application role, this tenant).
    await stack.owner.query(sql.unsafe`UPDATE files SET created_at = now() - interval '2 days' WHERE tenant_id = ${tenantId}`);
    const run = { asOf: new Date().toISOString(), graceHours: 24, retentionDays: 30, batchSize: 200 };
    expect(await markOrphans({ appPool: app }, tenantId, run, () => undefined)).toEqual({ marked: 1 });
    expect(await orphanedAtOf(stack.owner, { fileId: avatar.id })).toBeNull();
    expect(await orphanedAtOf(stack.owner, { fileId: spare.id })).not.toBeNull();

    // Cleared, the avatar's file is an orphan like any other.
    expect((await clearAvatar(member.token)).status).toBe(200);
    expect(await markOrphans({ appPool: app }, tenantId, { ...run, asOf: new Date().toISOString() }, () => undefined)).toEqual({ marked: 1 });
    expect(await orphanedAtOf(stack.owner, { fileId: avatar.id })).not.toBeNull();
  });
});
