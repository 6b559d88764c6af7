import { createFileTrashActivities } from '../../activities/files/trash.activities';
import { config } from '../../common/config';
import { runWithRequestContext, type AuthState } from '../../common/context';
import { createLogger } from '../../common/logger';
import type { FilesDeps } from '../../services/files/deps';
import { deleteFile, restoreFile } from '../../services/files/trash';
import { FileTrashTimers } from '../../services/files/trash-client';
import { fileTrashWorkflowId, type FileTrashResult } from '../../workflows/files/trash.messages';
import type { fileTrash } from '../../workflows/files/trash.workflow';
import { makeAvailable } from '../helpers/files';
import { fileRowOf, samplePng, stageFile, storageBytesOf, type StagedFile } from '../helpers/files-scan';
import { useFilesWorkflowStack } from '../helpers/files-workflows';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';
import { auditRecordsOf } from '../helpers/users';

/**
 * The trash timer under the time-skipping server with the real activity: files made available in a
 * bucket of this test, deleted and restored through services/files/trash.ts (the routes' own calls,
 * with the gateway's starter), rows, usage and outbox in PostgreSQL. 30 days pass in seconds.
 */
jest.setTimeout(120_000);

const DAY = 86_400_000;
const RETENTION_DAYS = config().files.softDeleteRetentionDays;
const logger = createLogger('file-trash-test', 'silent');

const stack = useFilesWorkflowStack('trash', createTimeSkippingEnv);

/** The files routes' dependencies as the gateway builds them, the trash timers on `taskQueue` of the test server. */
function filesDeps(taskQueue: string): FilesDeps {
  const trashes = new FileTrashTimers(stack.temporal.client, taskQueue, RETENTION_DAYS);
  return {
    db: stack.app, objectStore: stack.bucket, scans: () => undefined, trashes: () => trashes, settings: config().files, enforcePlanLimits: false, logger,
  };
}

const auth = (): AuthState => ({ userId: stack.tenant.admin.id, tenantId: stack.tenant.tenantId, email: stack.tenant.admin.email, roles: ['admin'] });

/** As the gateway serves a request of the tenant's admin: the trash timer it starts carries the admin as its actor. */
const asAdmin = <T>(fn: () => Promise<T>): Promise<T> =>
  runWithRequestContext({ traceId: 'file-trash-test', tenantId: stack.tenant.tenantId, actorId: stack.tenant.admin.id }, fn);

/** An available PNG with its original and a thumbnail in the store, counted in storage_bytes. */
async function availableFile(): Promise<StagedFile & { size: number }> {
  const png = await samplePng(64, 64);
  const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, { mimeType: 'image/png', content: png, uploadedBy: stack.tenant.member.id });
  await stack.bucket.s3.removeObject(stack.bucket.bucket, file.stagingKey);
  await makeAvailable(stack.owner, stack.bucket, { id: file.fileId, tenantId: file.tenantId, bucket: 'assets', mimeType: 'image/png' }, png, { icon_32: png });
  return { ...file, size: png.length };
}

const objectsOf = (file: StagedFile) => stack.bucket.keys(`${file.tenantId}/`).then((keys) => keys.filter((key) => key.includes(file.fileId)));
const handleOf = (file: StagedFile) => stack.temporal.client.workflow.getHandle<typeof fileTrash>(fileTrashWorkflowId(file.fileId));

/** Runs `steps` with a worker of the files activities polling `taskQueue`, then waits for the trash timer's end. */
async function withTrashWorker(taskQueue: string, file: StagedFile, steps: () => Promise<void>): Promise<FileTrashResult> {
  const worker = await createTestWorker(stack.temporal, { taskQueue, activities: createFileTrashActivities({ appPool: stack.app, objectStore: stack.bucket }) });
  return worker.runUntil(async () => {
    await steps();
    // Waiting for the result is what lets the test server skip time.
    return handleOf(file).result();
  });
}

describe('fileTrash workflow', () => {
  it('purges a deleted file after the retention: objects removed, purged, storage_bytes released, audit files.file.purged', async () => {
    const file = await availableFile();
    expect(await objectsOf(file)).toHaveLength(2);
    const storage = await storageBytesOf(stack.owner, stack.tenant.tenantId);
    const taskQueue = uniqueTaskQueue('files-trash');
    const deps = filesDeps(taskQueue);
    const startedAt = await stack.temporal.currentTimeMs();

    const result = await withTrashWorker(taskQueue, file, async () => {
      await asAdmin(() => deleteFile(deps, auth(), file.fileId));
      // Still counted while in the trash.
      expect(await storageBytesOf(stack.owner, stack.tenant.tenantId)).toBe(storage);
      expect((await fileRowOf(stack.owner, file)).status).toBe('deleted');
    });

    expect(result).toEqual({ purged: true });
    expect(await stack.temporal.currentTimeMs() - startedAt).toBeGreaterThanOrEqual(RETENTION_DAYS * DAY);
    expect(await fileRowOf(stack.owner, file)).toMatchObject({ status: 'purged', deletedAt: expect.any(String) });
    expect(await objectsOf(file)).toEqual([]);
    expect(await storageBytesOf(stack.owner, stack.tenant.tenantId)).toBe(storage - file.size);
    const audit = (await auditRecordsOf(stack.owner, stack.tenant.tenantId, 'files.file.purged')).filter((record) => record.entityId === file.fileId);
    expect(audit).toEqual([expect.objectContaining({ entityType: 'file', actorId: stack.tenant.admin.id, after: expect.objectContaining({ status: 'purged' }) })]);
  });

  it('ends without purging when the file is restored: after the retention it is available with its objects and bytes', async () => {
    const file = await availableFile();
    const storage = await storageBytesOf(stack.owner, stack.tenant.tenantId);
    const taskQueue = uniqueTaskQueue('files-trash');
    const deps = filesDeps(taskQueue);

    const result = await withTrashWorker(taskQueue, file, async () => {
      await asAdmin(() => deleteFile(deps, auth(), file.fileId));
      await stack.temporal.sleep(2 * DAY);
      expect(await asAdmin(() => restoreFile(deps, auth(), file.fileId))).toMatchObject({ id: file.fileId, status: 'available', deletedAt: null });
    });
    await stack.temporal.sleep((RETENTION_DAYS + 1) * DAY);

    expect(result).toEqual({ purged: false });
    expect(await fileRowOf(stack.owner, file)).toMatchObject({ status: 'available', deletedAt: null });
    expect(await objectsOf(file)).toHaveLength(2);
    expect(await storageBytesOf(stack.owner, stack.tenant.tenantId)).toBe(storage);
    expect(await auditRecordsOf(stack.owner, stack.tenant.tenantId, 'files.file.purged').then((records) => records.filter((record) => record.entityId === file.fileId))).toEqual([]);
  });

  it('gives a file deleted again after a restore a new run, which purges it', async () => {
    const file = await availableFile();
    const taskQueue = uniqueTaskQueue('files-trash');
    const deps = filesDeps(taskQueue);

    const result = await withTrashWorker(taskQueue, file, async () => {
      await asAdmin(() => deleteFile(deps, auth(), file.fileId));
      const first = (await handleOf(file).describe()).runId;
      await asAdmin(() => restoreFile(deps, auth(), file.fileId));
      // The first run ends on the restored signal; the closed id takes a new run.
      expect(await stack.temporal.client.workflow.getHandle<typeof fileTrash>(fileTrashWorkflowId(file.fileId), first).result()).toEqual({ purged: false });
      await asAdmin(() => deleteFile(deps, auth(), file.fileId));
      expect((await handleOf(file).describe()).runId).not.toBe(first);
    });

    expect(result).toEqual({ purged: true });
    expect((await fileRowOf(stack.owner, file)).status).toBe('purged');
    expect(await objectsOf(file)).toEqual([]);
  });
});
