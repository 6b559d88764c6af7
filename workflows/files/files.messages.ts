import { defineSignal } from '@temporalio/workflow';

/**
 * What the files service and the scan workflow (workflows/files/scan.workflow.ts) exchange. Bundled
 * into the workflow sandbox, so only types and message definitions live here.
 */

export interface FileScanInput {
  tenantId: string;
  fileId: string;
  /**
   * Whether the upload is already in staging (default true: a direct upload). false for a presigned
   * upload whose PUT has not been seen yet: the workflow waits for fileStaged.
   */
  staged?: boolean;
  /**
   * FILES_STAGING_TTL_HOURS in milliseconds: a file still not scanned this long after the workflow
   * started is rejected as staging-expired. Workflows read no configuration, so the starter sends it.
   */
  stagingTtlMs: number;
  /**
   * A presigned upload's wait for its PUT (the URL's TTL and a grace, services/files/presign.ts):
   * no fileStaged within it → rejected as upload-expired, releasing the reservation. Absent (direct
   * uploads, and histories from before presigned uploads) the wait is bounded by stagingTtlMs and
   * ends as staging-expired.
   */
  uploadTtlMs?: number;
  /**
   * The file's size as recorded at the upload (a presigned or resumable upload's declared one, which
   * its PUT cannot exceed): a small file is scanned in a local activity. Absent in histories before it.
   */
  sizeBytes?: number;
  /** NOTIFY_TASK_QUEUE: where the mails to the tenant's admins about an infected file are sent from. */
  notifyTaskQueue: string;
}

/**
 * A file's status as the scan's result reports it. The contract states it itself instead of naming the
 * files table's type: a workflow imports nothing of db/ (docs/decisions/layout.md, Workflow
 * contracts). The scan activities hand the workflow a row's status (FileScanOutcome), which no longer
 * compiles into this type should the table gain a status this list lacks.
 */
export type FileStatus = 'pending_scan' | 'available' | 'rejected' | 'deleted' | 'purged';

/**
 * How a scan ends. A rejection (infected, staging expired) is an outcome, not a failure: the workflow
 * completes with it; only a real fault fails the workflow. The status is the file's as the database
 * has it at the end (available or rejected, unless something else moved the file meanwhile).
 */
export interface FileScanResult {
  status: FileStatus;
  /** The rejected_reason of a rejected file: `infected: <signatures>`, `staging-expired`, ... */
  reason?: string;
}

/** The scan workflow of a file: one per file, ever (the starter's reuse policy), named for the Temporal UI. */
export function fileScanWorkflowId(fileId: string): string {
  return `files.scan:${fileId}`;
}

/** A presigned upload's PUT has landed in staging: the waiting scan workflow may scan it now. */
export const fileStagedSignal = defineSignal('fileStaged');
