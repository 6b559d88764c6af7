import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { newId } from '../../../common/ids';
import { sql } from '../../../db/pool';
import {
  keysUnder, makeAvailable, read, setStatus, storageUsageOf, upload, uploadParts, type FileObject, type Problem,
} from '../../helpers/files';
import { call, type JsonResponse } from '../../helpers/http';
import { expectProblem as problemOf, useFilesApiStack } from '../../helpers/files-api';
import { addMember } from '../../helpers/rbac';
import { auditRecordsOf } from '../../helpers/users';

/**
 * The trash (docs/reference/files.md#rule-18; issue 17): DELETE /files/:id, POST /files/:id/restore and
 * DELETE /files/:id/permanent through the real gateway, PostgreSQL and object store. The trash timers
 * the gateway starts go to a task queue no worker polls; the purge after the retention is
 * test/workflows/file-trash.workflow.test.ts's subject. Files are uploaded through the API and made
 * available as a clean scan leaves them (helpers/files makeAvailable).
 */
jest.setTimeout(60_000);

const stack = useFilesApiStack('files-trash-test');

const expectProblem = (response: { status: number; body: unknown }, status: number, type: string): Problem => problemOf(stack.gateway, response, status, type);

function send<T = Problem>(method: 'DELETE' | 'POST', path: string, token = stack.account.accessToken): Promise<JsonResponse<T>> {
  return call<T>(`${stack.gateway.baseUrl}/v1${path}`, { method, headers: { authorization: `Bearer ${token}` } });
}

const remove = (id: string, token?: string) => send('DELETE', `/files/${id}`, token);
const restore = <T = Problem>(id: string, token?: string) => send<T>('POST', `/files/${id}/restore`, token);
const purge = (id: string, token?: string) => send('DELETE', `/files/${id}/permanent`, token);

/** An uploaded file, made available with its original and a thumbnail in the store. */
async function availableFile(by = stack.account): Promise<FileObject> {
  const bytes = randomBytes(1500);
  const { body: file } = await upload(stack.gateway, by.accessToken, uploadParts(bytes, { bucket: 'assets', mimeType: 'image/png' }, 'photo.png'));
  await makeAvailable(stack.owner, stack.store, file, bytes, { icon_32: Buffer.from('thumbnail') });
  return file;
}

const objectsOf = (file: FileObject) => keysUnder(stack.store, `${file.tenantId}/assets/${file.id}/`);

const rowOf = (id: string) => stack.owner.one(sql.type(z.object({ status: z.string(), deletedAt: z.string().nullable() }))`
  SELECT status, deleted_at AS "deletedAt" FROM files WHERE id = ${id}
`);

const auditOf = async (file: FileObject, action: string) =>
  (await auditRecordsOf(stack.owner, file.tenantId, action)).filter((record) => record.entityId === file.id);

describe('DELETE /files/:id and POST /files/:id/restore', () => {
  it('moves the file to the trash (GET 404, still counted) and restores it (200 available, GET 302), each audited', async () => {
    const file = await availableFile();
    const usage = await storageUsageOf(stack.owner, stack.account.tenant.id);

    const deleted = await remove(file.id);
    expect(deleted.status).toBe(204);
    expect(await rowOf(file.id)).toEqual({ status: 'deleted', deletedAt: expect.any(String) });
    expectProblem(await read(stack.gateway, `/files/${file.id}`, stack.account.accessToken), 404, 'file-not-found');
    expect(await storageUsageOf(stack.owner, stack.account.tenant.id)).toBe(usage);
    expect(await objectsOf(file)).toHaveLength(2);
    expect(await auditOf(file, 'files.file.deleted')).toEqual([
      expect.objectContaining({ actorId: stack.account.user.id, after: expect.objectContaining({ status: 'deleted' }) }),
    ]);

    const restored = await restore<FileObject>(file.id);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id: file.id, status: 'available', deletedAt: null, url: expect.any(String) });
    expect((await read(stack.gateway, `/files/${file.id}`, stack.account.accessToken)).status).toBe(302);
    expect(await auditOf(file, 'files.file.restored')).toEqual([
      expect.objectContaining({ actorId: stack.account.user.id, after: expect.objectContaining({ status: 'available' }) }),
    ]);
  });

  it('deletes only an available file: pending_scan, rejected and already deleted are 404 file-not-found', async () => {
    const { body: pending } = await upload(stack.gateway, stack.account.accessToken, uploadParts(randomBytes(64)));
    expectProblem(await remove(pending.id), 404, 'file-not-found');
    const rejected = await availableFile();
    await setStatus(stack.owner, rejected.id, 'rejected');
    expectProblem(await remove(rejected.id), 404, 'file-not-found');
    const file = await availableFile();
    expect((await remove(file.id)).status).toBe(204);
    expectProblem(await remove(file.id), 404, 'file-not-found');
  });

  it('refuses to restore a file that is not in the trash: 400 file-not-deleted', async () => {
    const file = await availableFile();
    expectProblem(await restore(file.id), 400, 'file-not-deleted');
  });

  it('refuses to restore a file deleted more than the retention ago, purged or not: 410 file-restore-expired', async () => {
    const file = await availableFile();
    expect((await remove(file.id)).status).toBe(204);
    await stack.owner.query(sql.unsafe`UPDATE files SET deleted_at = now() - interval '31 days' WHERE id = ${file.id}`);
    expectProblem(await restore(file.id), 410, 'file-restore-expired');
    expect((await rowOf(file.id)).status).toBe('deleted');

    const purgedFromTrash = await availableFile();
    expect((await remove(purgedFromTrash.id)).status).toBe(204);
    expect((await purge(purgedFromTrash.id)).status).toBe(204);
    expectProblem(await restore(purgedFromTrash.id), 410, 'file-restore-expired');
  });
});

describe('DELETE /files/:id/permanent', () => {
  it('removes an available file\'s objects at once, purges it, releases its bytes and audits files.file.permanent_deleted', async () => {
    const file = await availableFile();
    const usage = await storageUsageOf(stack.owner, stack.account.tenant.id);
    expect(await objectsOf(file)).toHaveLength(2);

    expect((await purge(file.id)).status).toBe(204);
    expect(await objectsOf(file)).toEqual([]);
    expect((await rowOf(file.id)).status).toBe('purged');
    expect(await storageUsageOf(stack.owner, stack.account.tenant.id)).toBe(usage - file.size);
    expect(await auditOf(file, 'files.file.permanent_deleted')).toEqual([
      expect.objectContaining({ actorId: stack.account.user.id, after: expect.objectContaining({ status: 'purged' }) }),
    ]);
    expectProblem(await read(stack.gateway, `/files/${file.id}`, stack.account.accessToken), 404, 'file-not-found');
    expectProblem(await purge(file.id), 404, 'file-not-found');
    expectProblem(await restore(file.id), 404, 'file-not-found');
  });

  it('purges a file from the trash too, releasing its bytes', async () => {
    const file = await availableFile();
    expect((await remove(file.id)).status).toBe(204);
    const usage = await storageUsageOf(stack.owner, stack.account.tenant.id);
    expect((await purge(file.id)).status).toBe(204);
    expect(await objectsOf(file)).toEqual([]);
    expect(await storageUsageOf(stack.owner, stack.account.tenant.id)).toBe(usage - file.size);
  });
});

describe('access', () => {
  it('answers 404 file-not-found for another tenant\'s file on all three routes and changes nothing', async () => {
    const file = await availableFile();
    expectProblem(await remove(file.id, stack.stranger.accessToken), 404, 'file-not-found');
    expectProblem(await purge(file.id, stack.stranger.accessToken), 404, 'file-not-found');
    expect((await remove(file.id)).status).toBe(204);
    expectProblem(await restore(file.id, stack.stranger.accessToken), 404, 'file-not-found');
    expect((await rowOf(file.id)).status).toBe('deleted');
    expect(await objectsOf(file)).toHaveLength(2);
  });

  it('needs files.delete: a role holding only files.read is 403 on all three', async () => {
    const file = await availableFile();
    // A member of the file's tenant whose grants no request has cached yet: changing the roles of
    // a caller the gateway already served would race the gateway hearing of the change.
    const role = `file-reader-${newId()}`;
    await stack.owner.query(sql.unsafe`INSERT INTO roles (id, tenant_id, name, permissions) VALUES (${newId()}, ${stack.account.tenant.id}, ${role}, '{files.read}')`);
    const reader = await addMember(stack.gateway, stack.owner, stack.account.tenant.id, role);
    expectProblem(await remove(file.id, reader.token), 403, 'forbidden');
    expectProblem(await restore(file.id, reader.token), 403, 'forbidden');
    expectProblem(await purge(file.id, reader.token), 403, 'forbidden');
    expect((await rowOf(file.id)).status).toBe('available');
  });
});
