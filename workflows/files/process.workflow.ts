import {
  ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, log, proxyActivities,
} from '@temporalio/workflow';
import type { FileProcessActivities, RenderedVersion } from '../../activities/files/process.activities';
import type { FileProcessInput, FileProcessResult } from './process.messages';

/**
 * The store and the database are waited for with backoff from 1 s to 1 min apart; an attempt at the
 * image itself is also retried when it runs out of time. Only what no retry can change (the image
 * cannot be read, an operation does not fit it) fails at once, and the activity says so.
 */
const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' } as const;

/** One transaction, or the removal of a few objects: seconds. The retry is safe (services/files/process.ts). */
const steps = proxyActivities<FileProcessActivities>({ startToCloseTimeout: '30 seconds', retry });

type Failed = Extract<FileProcessResult, { status: 'failed' }>;

const secondsOf = (ms: number): string => `${Math.round(ms / 1000)} s`;

function refusalOf(error: unknown): string | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  return cause instanceof ApplicationFailure && cause.type === 'processing-failed' ? cause.message : undefined;
}

/**
 * One image processing job (docs/reference/files.md#rule-16: POST /files/:id/process), under the workflow id
 * `files.process:<jobId>`:
 *
 *   render   the operations are applied to the file's current content and written at the job's own
 *            key; each attempt gets FILES_IMAGE_PROCESSING_TIMEOUT_SEC, a slower one is abandoned
 *            and retried in the background while the file keeps its content (docs/reference/files.md#rule-17).
 *   replace  one guarded transaction makes the new content the file's; if another job replaced the
 *            content this was made from meanwhile, this job renders again from that one, so jobs
 *            apply one after the other and none is lost.
 *   then     the replaced content is removed, icon_32 and card_300 are rendered again (the other
 *            presets on demand), and the file's job is settled completed.
 *
 * A refusal (an image sharp cannot read, an operation that does not fit it, no attempt within the
 * retry window, the file deleted meanwhile) completes the workflow with `status: failed` and its
 * problem, the file's content untouched; the job kind renders it as a failed job.
 */
export async function fileProcess(input: FileProcessInput): Promise<FileProcessResult> {
  const ref = { tenantId: input.tenantId, fileId: input.fileId };
  const timed = proxyActivities<FileProcessActivities>({ startToCloseTimeout: input.attemptTimeoutMs, retry });
  const job = { jobId: input.jobId, operations: input.operations, quality: input.quality };

  const fail = async (problem: Failed['problem'], detail: string): Promise<Failed> => {
    const result: Failed = { status: 'failed', fileId: input.fileId, problem, detail };
    await steps.settleProcessing(ref, input.jobId, result);
    return result;
  };

  let version: RenderedVersion | null;
  try {
    version = await CancellationScope.withTimeout(input.retryWindowMs, async () => {
      for (;;) {
        const rendered = await timed.renderFileVersion(ref, job);
        if (!rendered) return null;
        // Never cut short: a replacement that committed must be reported as one.
        const outcome = await CancellationScope.nonCancellable(() => steps.replaceContent(ref, input.jobId, rendered));
        if (outcome === 'replaced') return rendered;
        if (outcome === 'gone') {
          await steps.removeObjects([rendered.objectKey]);
          return null;
        }
        log.info('the content this job rendered from was replaced by another job; rendering again', { fileId: input.fileId });
      }
    });
  } catch (error) {
    if (isCancellation(error)) {
      return fail('processing-failed', `File ${input.fileId} could not be processed within ${secondsOf(input.retryWindowMs)} `
        + `(each attempt may take ${secondsOf(input.attemptTimeoutMs)}); it keeps its content`);
    }
    const refusal = refusalOf(error);
    if (refusal === undefined) throw error;
    return fail('processing-failed', `File ${input.fileId}: ${refusal}`);
  }
  if (!version) return fail('file-not-found', `File ${input.fileId} is no longer available`);

  await steps.removeObjects([version.fromKey]);
  try {
    await CancellationScope.withTimeout(input.retryWindowMs, () => timed.regenerateThumbnails(ref));
  } catch (error) {
    if (!isCancellation(error)) throw error;
    log.warn('the thumbnails of the processed file were not rendered in time; they render on demand', { fileId: input.fileId });
  }
  await steps.settleProcessing(ref, input.jobId, { status: 'completed' });
  const { mimeType, sizeBytes: size, width, height } = version;
  return { status: 'completed', fileId: input.fileId, mimeType, size, width, height };
}
