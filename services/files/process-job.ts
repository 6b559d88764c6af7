import { problems, type Problem } from '../../common/problems';
import type { FileProcessResult, ProcessedFile } from '../../workflows/files/process.messages';
import { fileProcessWorkflowId } from '../../workflows/files/process.messages';
import { jobIdOf, type JobKind } from '../../common/jobs';

/** The kind of an image processing job (GET /v1/jobs/{jobId}): `files-process.<uuid>`. */
export const FILE_PROCESS_JOB = 'files-process';

/** POST /files/:id/process needs files.write; following its job needs the same. */
export const FILE_PROCESS_PERMISSION = 'files.write';

/** The local ids the processing route issues: UUID v7 (common/ids newId). */
const PROCESS_JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The public id of a processing job, as its 202 answers it. */
export function processJobIdOf(jobId: string): string {
  return jobIdOf(FILE_PROCESS_JOB, jobId);
}

function problemOf(result: Extract<FileProcessResult, { status: 'failed' }>): Problem {
  return result.problem === 'file-not-found' ? problems.fileNotFound(result.fileId) : problems.processingFailed(result.detail);
}

/**
 * A processing job is done when its workflow is (workflows/files/process.workflow.ts). The workflow
 * completes with a refusal as well as with new content: a refusal is rendered as a failed job whose
 * error is its problem (processing-failed, or file-not-found for a file deleted meanwhile), a
 * success as the new content's type, size and dimensions. The workflow id names no tenant (the
 * issue's `files.process:<jobId>`); the job's tenant is its memo's, which read-job.ts checks.
 */
export const fileProcessJobKind: JobKind = {
  name: FILE_PROCESS_JOB,
  title: 'image processing',
  permission: FILE_PROCESS_PERMISSION,
  localId: PROCESS_JOB_ID,
  workflowId: (_tenantId, localId) => fileProcessWorkflowId(localId),
  async outcome(execution) {
    if (execution.status !== 'completed') return undefined;
    const result = await execution.handle.result() as FileProcessResult;
    if (result.status === 'failed') return { completedAt: null, result: undefined, error: problemOf(result) };
    const { fileId, mimeType, size, width, height } = result;
    return { completedAt: null, result: { fileId, mimeType, size, width, height } satisfies ProcessedFile };
  },
};
