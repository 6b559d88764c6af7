import { ApplicationFailure, Context } from '@temporalio/activity';
import { removeObjects } from '../../common/object-store';
import { requestActor } from '../../common/temporal/activity-context';
import { OperationMisfit, UnprocessableImage } from '../../services/files/image-operations';
import {
  renderFileVersion, replaceContent, settleProcessing, type FileProcessWorkDeps, type RenderedVersion, type ReplaceOutcome,
} from '../../services/files/process';
import type { FileRef } from '../../services/files/scan';
import { UPLOAD_THUMBNAILS, generateThumbnails } from '../../services/files/thumbnails';
import type { FileProcessInput, FileProcessResult } from '../../workflows/files/process.messages';

export type { RenderedVersion, ReplaceOutcome };

/**
 * The processing workflow's activities (workflows/files/process.workflow.ts): services/files/process.ts,
 * with failures typed for the workflow's retry policy. An image sharp cannot read or an operation
 * that does not fit it is non-retryable `processing-failed`; everything else (the store, the
 * database, an attempt over its time) is thrown as it is and retried.
 */
export function createFileProcessActivities(deps: FileProcessWorkDeps) {
  return {
    /** The new content, written at the job's own key; null when the file is no longer available. */
    async renderFileVersion(ref: FileRef, job: Pick<FileProcessInput, 'jobId' | 'operations' | 'quality'>): Promise<RenderedVersion | null> {
      // An attempt past its start-to-close timeout is cancelled: it stops at the next pass, before writing.
      const { cancellationSignal } = Context.current();
      try {
        return await renderFileVersion(deps, ref, job, () => cancellationSignal.throwIfAborted());
      } catch (error) {
        if (error instanceof UnprocessableImage || error instanceof OperationMisfit) {
          throw ApplicationFailure.nonRetryable(error.message, 'processing-failed');
        }
        throw error;
      }
    },

    /** The file's content becomes the version, with the storage difference and the audit record. */
    async replaceContent(ref: FileRef, jobId: string, version: RenderedVersion): Promise<ReplaceOutcome> {
      return replaceContent(deps, ref, jobId, version, requestActor());
    },

    /** Objects no row points at any more: the content a job replaced, or a version that never became the file's. */
    async removeObjects(keys: string[]): Promise<void> {
      await removeObjects(deps.objectStore, keys);
    },

    /** The upload's thumbnails (icon_32, card_300) of the new content; the other presets render on demand. */
    async regenerateThumbnails(ref: FileRef): Promise<void> {
      await generateThumbnails(deps, ref, UPLOAD_THUMBNAILS);
    },

    async settleProcessing(
      ref: FileRef, jobId: string, result: { status: 'completed' } | Extract<FileProcessResult, { status: 'failed' }>,
    ): Promise<void> {
      await settleProcessing(deps.appPool, ref, jobId, result, requestActor());
    },
  };
}

export type FileProcessActivities = ReturnType<typeof createFileProcessActivities>;
