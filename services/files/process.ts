import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import sharp from 'sharp';
import { currentRequestContext, type AuthState } from '../../common/context';
import { newId } from '../../common/ids';
import { problems } from '../../common/problems';
import type { TemporalHandle } from '../../common/temporal/client';
import { adjustUsage } from '../../db/queries/billing/usage.queries';
import { selectFile, type FileRow } from '../../db/queries/files/files.queries';
import { markFileProcessing, replaceFileContent, settleFileProcessing } from '../../db/queries/files/process.queries';
import { withTenant } from '../../db/tenant';
import {
  fileProcessWorkflowId, type FileProcessInput, type FileProcessResult, type ImageOperation,
} from '../../workflows/files/process.messages';
import { enqueueEvent } from '../events/publish';
import type { FilesDeps } from './deps';
import { OperationMisfit, applyOperations, orientedSizeOf, plannedSize } from './image-operations';
import { versionKeyOf } from './object-keys';
import { processJobIdOf } from './process-job';
import { availableFile } from './read';
import type { FileActor, FileRef, FileScanDeps } from './scan';
import { fileAudit } from './scan-records';
import { isImage } from './thumbnails';

/**
 * Image processing (docs/reference/files.md#rule-16; docs/decisions/files.md, Processing).
 * The request is checked and recorded here and answered 202; the workflow `files.process:<jobId>`
 * (workflows/files/process.workflow.ts) makes the new content, in steps each safe to repeat:
 *   1. render: the operations applied to the current content, written to a key of its own
 *      (versionKeyOf), never over the content it was made from, so a failed or timed-out attempt
 *      leaves the file as it was;
 *   2. replace: one transaction points the row at the new content (guarded by the content it was
 *      made from), adjusts storage_bytes by the difference and writes the audit record;
 *   3. the old content is removed, the upload's thumbnails rendered again, and the job settled.
 */

/** What the request checks before anything is recorded: the first bytes of an image hold its header. */
const HEADER_BYTES = 512 * 1024;

/** How long a job's attempts may go on (each FILES_IMAGE_PROCESSING_TIMEOUT_SEC) before it ends failed, the original kept. */
export const PROCESSING_RETRY_WINDOW_MS = 60 * 60 * 1000;

export interface FileProcessRequest {
  operations: ImageOperation[];
  quality: number;
}

/** The 202's body (docs/reference/files.md, Resources: {fileId, jobId, status: processing, startedAt}). */
export interface FileProcessAccepted {
  fileId: string;
  jobId: string;
  status: 'processing';
  startedAt: string;
}

/** The files routes' dependencies and the gateway's Temporal client, which starts the workflow. */
export interface FileProcessDeps extends FilesDeps {
  /** Undefined until the gateway's start-up connection to Temporal succeeded. */
  temporal(): TemporalHandle | undefined;
}

function actorOf(auth: AuthState): FileActor {
  return { actorId: auth.userId, traceId: currentRequestContext()?.traceId };
}

/**
 * Checks that the file's content is an image sharp reads and that the operations fit it: the media
 * type, then sharp's reading of the header (the first HEADER_BYTES; the pixels are the job's) and
 * the sizes the operations lead to. Anything else is 422 processing-failed.
 */
async function checkProcessable(deps: FilesDeps, file: FileRow & { objectKey: string }, operations: readonly ImageOperation[]): Promise<void> {
  if (!isImage(file.mimeType)) throw problems.processingFailed(`File ${file.id} is ${file.mimeType}, not an image`);
  const { s3, bucket } = deps.objectStore;
  const header = await buffer(await s3.getPartialObject(bucket, file.objectKey, 0, HEADER_BYTES));
  let size;
  try {
    size = orientedSizeOf(await sharp(header).metadata());
  } catch (err) {
    deps.logger.info({ err, fileId: file.id, mimeType: file.mimeType }, 'a file to process cannot be read as an image');
    throw problems.processingFailed(`File ${file.id} (${file.mimeType}) cannot be read as an image`);
  }
  try {
    plannedSize(size, operations);
  } catch (err) {
    if (err instanceof OperationMisfit) throw problems.processingFailed(`File ${file.id}: ${err.message}`);
    throw err;
  }
}

/**
 * POST /files/:id/process: an available image of the caller's tenant gets a job. Unknown, pending,
 * deleted or another tenant's files are 404 file-not-found, rejected ones 422 file-rejected (as
 * reading them); a file that is not a readable image, or operations that do not fit it, 422
 * processing-failed. The job is recorded on the row with its audit record, then its workflow is
 * started (the workflow must find the row); if that start fails the job is settled failed and the
 * answer is 503.
 */
export async function requestProcessing(deps: FileProcessDeps, auth: AuthState, id: string, request: FileProcessRequest): Promise<FileProcessAccepted> {
  const temporal = deps.temporal();
  if (!temporal) throw problems.unavailable('The workflow service is not connected; try again shortly');
  const file = await availableFile(deps, auth, id);
  await checkProcessable(deps, file, request.operations);

  const jobId = newId();
  const startedAt = new Date().toISOString();
  const actor = actorOf(auth);
  await withTenant(deps.db, auth.tenantId, async (tx) => {
    const row = await markFileProcessing(tx, auth.tenantId, id, { jobId, startedAt });
    // Deleted between the check and now.
    if (!row) throw problems.fileNotFound(id);
    await enqueueEvent(tx, fileAudit('files.file.processing_requested', row, actor, { jobId: processJobIdOf(jobId), ...request }));
  });

  const input: FileProcessInput = {
    tenantId: auth.tenantId, fileId: id, jobId, ...request,
    attemptTimeoutMs: deps.settings.imageProcessingTimeoutSec * 1000, retryWindowMs: PROCESSING_RETRY_WINDOW_MS,
  };
  try {
    // By name: the workflow's own type would close an import cycle through the activities, which import this file.
    await temporal.client.workflow.start('fileProcess', {
      taskQueue: deps.settings.taskQueue,
      workflowId: fileProcessWorkflowId(jobId),
      args: [input],
      // GET /v1/jobs/{jobId} answers a job only to the tenant its memo names (services/jobs/read-job.ts).
      memo: { tenantId: auth.tenantId },
      staticSummary: `Processing of file ${id}: ${request.operations.map((operation) => Object.keys(operation)[0]).join(', ')}`,
    });
  } catch (error) {
    await settleProcessing(deps.db, { tenantId: auth.tenantId, fileId: id }, jobId, { status: 'failed', fileId: id, problem: 'processing-failed', detail: 'not started' }, actor);
    throw problems.unavailable('The processing job could not be started; try again', error);
  }
  return { fileId: id, jobId: processJobIdOf(jobId), status: 'processing', startedAt };
}

/** What the processing workflow's activities work with (activities/files/process.activities.ts). */
export type FileProcessWorkDeps = Pick<FileScanDeps, 'appPool' | 'objectStore' | 'logger'>;

/** A job's new content, written and not yet the file's. */
export interface RenderedVersion {
  /** The content it was made from: the row must still point there for it to replace it. */
  fromKey: string;
  objectKey: string;
  mimeType: string;
  sizeBytes: number;
  sha256: string;
  width: number;
  height: number;
}

/**
 * Step 1: the job's operations applied to the file's current content, written at the job's version
 * key. null when the file is no longer available. sharp's failures (not an image, a truncated one, a
 * crop outside it) are thrown as UnprocessableImage or OperationMisfit: no retry can change them.
 * The store's are thrown as they are. `checkpoint` throws once the attempt is cancelled (timed out).
 */
export async function renderFileVersion(
  deps: FileProcessWorkDeps, ref: FileRef, job: Pick<FileProcessInput, 'jobId' | 'operations' | 'quality'>, checkpoint?: () => void,
): Promise<RenderedVersion | null> {
  const file = await withTenant(deps.appPool, ref.tenantId, (tx) => selectFile(tx, ref.tenantId, ref.fileId));
  if (file?.status !== 'available' || !file.objectKey) return null;
  const { s3, bucket } = deps.objectStore;
  // Images are at most FILES_MAX_IMAGE_SIZE_MB (10 MB): read whole, decoded once.
  const source = await buffer(await s3.getObject(bucket, file.objectKey));
  const image = await applyOperations(source, job.operations, job.quality, checkpoint);
  checkpoint?.();
  const objectKey = versionKeyOf(ref.tenantId, file.bucket, file.id, job.jobId);
  await s3.putObject(bucket, objectKey, image.data, image.data.length, { 'Content-Type': image.mimeType });
  return {
    fromKey: file.objectKey, objectKey, mimeType: image.mimeType, sizeBytes: image.data.length,
    sha256: createHash('sha256').update(image.data).digest('hex'), width: image.width, height: image.height,
  };
}

/**
 * Where step 2 left the file: `replaced` (now or by an earlier attempt), `superseded` (another job's
 * content replaced the one this version was made from: render again from it), or `gone` (no longer
 * available: deleted, purged).
 */
export type ReplaceOutcome = 'replaced' | 'superseded' | 'gone';

/**
 * Step 2: the file's content becomes the rendered version, in one transaction with the difference in
 * storage_bytes and the audit record files.file.processed, if the row still points at the content the
 * version was made from. Its thumbnails are forgotten (they show the old content). Safe to repeat: a
 * second call finds the row already pointing at the version.
 */
export async function replaceContent(deps: FileProcessWorkDeps, ref: FileRef, jobId: string, version: RenderedVersion, actor: FileActor): Promise<ReplaceOutcome> {
  const { tenantId, fileId } = ref;
  return withTenant(deps.appPool, tenantId, async (tx) => {
    const before = await selectFile(tx, tenantId, fileId);
    if (before?.status !== 'available') return 'gone';
    if (before.objectKey === version.objectKey) return 'replaced';
    const after = await replaceFileContent(tx, tenantId, fileId, version.fromKey, version);
    if (!after) return 'superseded';
    await adjustUsage(tx, 'storage_bytes', after.sizeBytes - before.sizeBytes);
    await enqueueEvent(tx, fileAudit('files.file.processed', after, actor, {
      jobId: processJobIdOf(jobId), previous: { mimeType: before.mimeType, size: before.sizeBytes, sha256: before.sha256 },
    }));
    return 'replaced';
  });
}

/**
 * The job's end on its file: the row's job (if it is still the latest and still processing) becomes
 * completed or failed; a failure is audited (files.file.processing_failed) with its problem.
 */
export async function settleProcessing(
  db: FileProcessWorkDeps['appPool'], ref: FileRef, jobId: string,
  result: { status: 'completed' } | Extract<FileProcessResult, { status: 'failed' }>, actor: FileActor,
): Promise<void> {
  await withTenant(db, ref.tenantId, async (tx) => {
    const row = await settleFileProcessing(tx, ref.tenantId, ref.fileId, jobId, { status: result.status, completedAt: new Date().toISOString() });
    if (row && result.status === 'failed') {
      await enqueueEvent(tx, fileAudit('files.file.processing_failed', row, actor, {
        jobId: processJobIdOf(jobId), problem: result.problem, detail: result.detail,
      }));
    }
  });
}
