import { buffer } from 'node:stream/consumers';
import sharp from 'sharp';
import { createFileProcessActivities } from '../../activities/files/process.activities';
import { config } from '../../common/config';
import { runWithRequestContext, type AuthState } from '../../common/context';
import { createLogger } from '../../common/logger';
import type { TemporalHandle } from '../../common/temporal/client';
import { versionKeyOf } from '../../services/files/object-keys';
import { requestProcessing, type FileProcessDeps, type FileProcessRequest } from '../../services/files/process';
import { parseJobId } from '../../common/jobs';
import { fileProcessWorkflowId, type FileProcessResult } from '../../workflows/files/process.messages';
import type { fileProcess } from '../../workflows/files/process.workflow';
import { makeAvailable, setStatus } from '../helpers/files';
import { fileRowOf, samplePng, stageFile, storageBytesOf, type StagedFile } from '../helpers/files-scan';
import { useFilesWorkflowStack } from '../helpers/files-workflows';
import { openedBeforeAll } from '../helpers/lifecycle';
import {
  connectDevServer, createTestWorker, createTimeSkippingEnv, uniqueTaskQueue, type WorkerTarget,
} from '../helpers/temporal';
import { auditRecordsOf } from '../helpers/users';

/**
 * The processing workflow with the real activities (sharp, the store in a bucket of this test,
 * PostgreSQL), started through services/files/process.ts as the route starts it. The jobs run under
 * the time-skipping server; the attempt that runs out of time runs on the dev server, where an
 * activity's start-to-close timeout passes in real time.
 */
jest.setTimeout(120_000);

const logger = createLogger('file-process-test', 'silent');

const stack = useFilesWorkflowStack('process', createTimeSkippingEnv);

/** The route's dependencies, its workflows started on `taskQueue` of `temporal`. */
function processDeps(taskQueue: string, temporal: TemporalHandle, timeoutSec = config().files.imageProcessingTimeoutSec): FileProcessDeps {
  return {
    db: stack.app, objectStore: stack.bucket, scans: () => undefined, trashes: () => undefined, temporal: () => temporal,
    settings: { ...config().files, taskQueue, imageProcessingTimeoutSec: timeoutSec }, enforcePlanLimits: false, logger,
  };
}

const auth = (): AuthState => ({ userId: stack.tenant.admin.id, tenantId: stack.tenant.tenantId, email: stack.tenant.admin.email, roles: ['admin'] });

/** As the gateway serves a request of the tenant's admin: the job carries the admin as its actor. */
const asAdmin = <T>(fn: () => Promise<T>): Promise<T> =>
  runWithRequestContext({ traceId: 'file-process-test', tenantId: stack.tenant.tenantId, actorId: stack.tenant.admin.id }, fn);

/** An available image with its original and an icon_32 and avatar_64 in the store, counted in storage_bytes. */
async function availableImage(content?: Buffer): Promise<StagedFile & { content: Buffer }> {
  const image = content ?? await samplePng(640, 480);
  const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, { mimeType: 'image/png', content: image, uploadedBy: stack.tenant.member.id });
  await stack.bucket.s3.removeObject(stack.bucket.bucket, file.stagingKey);
  const icon = await sharp(await samplePng(32, 32)).webp().toBuffer();
  await makeAvailable(stack.owner, stack.bucket, { id: file.fileId, tenantId: file.tenantId, bucket: 'assets', mimeType: 'image/png' }, image, { icon_32: icon, avatar_64: icon });
  return { ...file, content: image };
}

const originalKeyOf = (file: StagedFile) => `${file.tenantId}/assets/${file.fileId}/original`;
const objectsOf = (file: StagedFile) => stack.bucket.keys(`${file.tenantId}/`).then((keys) => keys.filter((key) => key.includes(file.fileId)).sort());
const auditOf = (file: StagedFile, action: string) =>
  auditRecordsOf(stack.owner, stack.tenant.tenantId, action).then((records) => records.filter((record) => record.entityId === file.fileId));

/** Requests the job through the service with a worker of the processing activities on `target`, and waits for its end. */
async function process(
  target: WorkerTarget & { client: TemporalHandle['client'] }, file: StagedFile, request: FileProcessRequest,
  options: { activities?: object; timeoutSec?: number } = {},
): Promise<{ result: FileProcessResult; jobId: string }> {
  const taskQueue = uniqueTaskQueue('files-process');
  const deps = processDeps(taskQueue, { client: target.client, connection: target.client.connection as TemporalHandle['connection'] }, options.timeoutSec);
  const worker = await createTestWorker(target, {
    taskQueue, activities: options.activities ?? createFileProcessActivities({ appPool: stack.app, objectStore: stack.bucket, logger }),
  });
  return worker.runUntil(async () => {
    const accepted = await asAdmin(() => requestProcessing(deps, auth(), file.fileId, request));
    expect(accepted).toEqual({ fileId: file.fileId, jobId: expect.stringMatching(/^files-process\./), status: 'processing', startedAt: expect.any(String) });
    expect((await fileRowOf(stack.owner, file)).processing).toMatchObject({ jobId: parseJobId(accepted.jobId).localId, status: 'processing' });
    const handle = target.client.workflow.getHandle<typeof fileProcess>(fileProcessWorkflowId(parseJobId(accepted.jobId).localId));
    return { result: await handle.result(), jobId: parseJobId(accepted.jobId).localId };
  });
}

describe('fileProcess workflow', () => {
  it('applies the operations in order, replaces the content at a new key, renders icon_32 and card_300 again and settles the job', async () => {
    const file = await availableImage();
    const storage = await storageBytesOf(stack.owner, stack.tenant.tenantId);

    // 640×480 → crop 400×300 → resize to 200 wide (200×150) → a quarter turn (150×200) → WebP.
    const { result, jobId } = await process(stack.temporal, file, {
      operations: [{ crop: { x: 10, y: 20, width: 400, height: 300 } }, { resize: { width: 200 } }, { rotate: { degrees: 90 } }, { convert: { format: 'webp' } }],
      quality: 60,
    });

    expect(result).toEqual({ status: 'completed', fileId: file.fileId, mimeType: 'image/webp', size: expect.any(Number), width: 150, height: 200 });
    if (result.status !== 'completed') return;
    const versionKey = versionKeyOf(file.tenantId, 'assets', file.fileId, jobId);
    const row = await fileRowOf(stack.owner, file);
    expect(row).toMatchObject({
      status: 'available', objectKey: versionKey, mimeType: 'image/webp', sizeBytes: result.size,
      processing: { jobId, status: 'completed', startedAt: expect.any(String), completedAt: expect.any(String) },
    });
    // The upload's presets are rendered again from the new content; avatar_64 is left to render on demand.
    expect(Object.keys(row.thumbnails).sort()).toEqual(['card_300', 'icon_32']);
    const stored = await sharp(await buffer(await stack.bucket.s3.getObject(stack.bucket.bucket, versionKey))).metadata();
    expect({ format: stored.format, width: stored.width, height: stored.height }).toEqual({ format: 'webp', width: 150, height: 200 });
    // The original is removed once it is replaced; the stale avatar_64 object waits to be rendered over.
    expect(await objectsOf(file)).not.toContain(originalKeyOf(file));
    expect(await objectsOf(file)).toContain(versionKey);
    expect(await storageBytesOf(stack.owner, stack.tenant.tenantId)).toBe(storage - file.content.length + result.size);
    expect(await auditOf(file, 'files.file.processing_requested')).toEqual([
      expect.objectContaining({ actorId: stack.tenant.admin.id, meta: expect.objectContaining({ jobId: `files-process.${jobId}`, quality: 60 }) }),
    ]);
    expect(await auditOf(file, 'files.file.processed')).toEqual([expect.objectContaining({
      actorId: stack.tenant.admin.id, after: expect.objectContaining({ objectKey: versionKey, mimeType: 'image/webp' }),
      meta: expect.objectContaining({ previous: expect.objectContaining({ mimeType: 'image/png', size: file.content.length }) }),
    })]);
  });

  it('keeps the format of a source it writes, and applies a second job to the first one\'s content', async () => {
    const file = await availableImage(await sharp(await samplePng(300, 200)).jpeg().toBuffer());
    const first = await process(stack.temporal, file, { operations: [{ resize: { height: 100 } }], quality: 85 });
    expect(first.result).toMatchObject({ status: 'completed', mimeType: 'image/jpeg', width: 150, height: 100 });

    const second = await process(stack.temporal, file, { operations: [{ rotate: { degrees: 270 } }], quality: 85 });
    expect(second.result).toMatchObject({ status: 'completed', mimeType: 'image/jpeg', width: 100, height: 150 });
    expect((await fileRowOf(stack.owner, file)).objectKey).toBe(versionKeyOf(file.tenantId, 'assets', file.fileId, second.jobId));
    // The first job's content is removed when the second replaces it.
    expect(await objectsOf(file)).not.toContain(versionKeyOf(file.tenantId, 'assets', file.fileId, first.jobId));
  });

  it('ends failed with processing-failed for pixels sharp cannot decode: the content, thumbnails and usage are kept', async () => {
    const png = await samplePng(640, 480);
    // The header (and so the request's check) is intact; the image data is cut short.
    const file = await availableImage(png.subarray(0, Math.floor(png.length / 2)));
    const before = await fileRowOf(stack.owner, file);
    const storage = await storageBytesOf(stack.owner, stack.tenant.tenantId);

    const { result, jobId } = await process(stack.temporal, file, { operations: [{ rotate: { degrees: 180 } }], quality: 85 });

    expect(result).toEqual({ status: 'failed', fileId: file.fileId, problem: 'processing-failed', detail: expect.stringContaining('cannot be processed') });
    const row = await fileRowOf(stack.owner, file);
    expect(row).toMatchObject({
      status: 'available', objectKey: before.objectKey, sizeBytes: before.sizeBytes, thumbnails: before.thumbnails,
      processing: { jobId, status: 'failed', completedAt: expect.any(String) },
    });
    expect(await objectsOf(file)).toContain(originalKeyOf(file));
    expect(await objectsOf(file)).not.toContain(versionKeyOf(file.tenantId, 'assets', file.fileId, jobId));
    expect(await storageBytesOf(stack.owner, stack.tenant.tenantId)).toBe(storage);
    expect(await auditOf(file, 'files.file.processing_failed')).toEqual([
      expect.objectContaining({ meta: expect.objectContaining({ jobId: `files-process.${jobId}`, problem: 'processing-failed' }) }),
    ]);
  });

  it('ends failed with file-not-found when the file leaves available before the job replaces its content', async () => {
    const file = await availableImage();
    const activities = createFileProcessActivities({ appPool: stack.app, objectStore: stack.bucket, logger });
    const { result, jobId } = await process(stack.temporal, file, { operations: [{ resize: { width: 100 } }], quality: 85 }, {
      activities: {
        ...activities,
        // The file is deleted while its new content is being rendered.
        async renderFileVersion(...args: Parameters<typeof activities.renderFileVersion>) {
          const version = await activities.renderFileVersion(...args);
          await setStatus(stack.owner, file.fileId, 'deleted');
          return version;
        },
      },
    });

    expect(result).toEqual({ status: 'failed', fileId: file.fileId, problem: 'file-not-found', detail: expect.any(String) });
    expect(await fileRowOf(stack.owner, file)).toMatchObject({ status: 'deleted', objectKey: originalKeyOf(file), processing: { status: 'failed' } });
    // The version that never became the file's is removed.
    expect(await objectsOf(file)).not.toContain(versionKeyOf(file.tenantId, 'assets', file.fileId, jobId));
  });
});

describe('fileProcess workflow, an attempt over its time (dev server)', () => {
  const server = openedBeforeAll(connectDevServer);

  it('abandons an attempt over FILES_IMAGE_PROCESSING_TIMEOUT_SEC with the original kept, and retries it in the background', async () => {
    const file = await availableImage();
    const before = await fileRowOf(stack.owner, file);
    const activities = createFileProcessActivities({ appPool: stack.app, objectStore: stack.bucket, logger });
    const seenAtRetry: unknown[] = [];
    let attempts = 0;

    const { result } = await process(server, file, { operations: [{ resize: { width: 64 } }], quality: 85 }, {
      // Real time on the dev server: the retry must do its work within the same limit, so the limit
      // leaves it room on a busy machine; the first attempt overruns it by 3 s.
      timeoutSec: 5,
      activities: {
        ...activities,
        async renderFileVersion(...args: Parameters<typeof activities.renderFileVersion>) {
          attempts += 1;
          // The first attempt takes longer than the 5 s it is given.
          if (attempts === 1) await new Promise((resolve) => setTimeout(resolve, 8_000));
          else seenAtRetry.push(await fileRowOf(stack.owner, file));
          return activities.renderFileVersion(...args);
        },
      },
    });

    expect(result).toMatchObject({ status: 'completed', width: 64, height: 48 });
    expect(attempts).toBeGreaterThanOrEqual(2);
    // When the retry started, the file still had its original content and thumbnails (pending, not replaced).
    expect(seenAtRetry[0]).toMatchObject({ objectKey: before.objectKey, thumbnails: before.thumbnails, processing: { status: 'processing' } });
  });

  it('ends failed with processing-failed when no attempt succeeds within the retry window, the file keeping its content', async () => {
    const file = await availableImage();
    const before = await fileRowOf(stack.owner, file);
    const taskQueue = uniqueTaskQueue('files-process');
    const worker = await createTestWorker(server, {
      taskQueue,
      activities: {
        ...createFileProcessActivities({ appPool: stack.app, objectStore: stack.bucket, logger }),
        // Every attempt runs out of time (or finds the store down): retried until the window closes.
        async renderFileVersion() {
          await new Promise((resolve) => setTimeout(resolve, 1_500));
          throw new Error('still too slow');
        },
      },
    });

    const result = await worker.runUntil(asAdmin(() => server.client.workflow.execute<typeof fileProcess>('fileProcess', {
      taskQueue, workflowId: fileProcessWorkflowId(`window-${file.fileId}`), memo: { tenantId: stack.tenant.tenantId },
      args: [{
        tenantId: stack.tenant.tenantId, fileId: file.fileId, jobId: `window-${file.fileId}`, operations: [{ rotate: { degrees: 90 } }], quality: 85,
        attemptTimeoutMs: 1_000, retryWindowMs: 4_000,
      }],
    })));

    expect(result).toEqual({ status: 'failed', fileId: file.fileId, problem: 'processing-failed', detail: expect.stringContaining('keeps its content') });
    expect(await fileRowOf(stack.owner, file)).toMatchObject({ objectKey: before.objectKey, sizeBytes: before.sizeBytes, thumbnails: before.thumbnails });
    expect(await objectsOf(file)).toContain(originalKeyOf(file));
  });
});
