import { defineSignal } from '@temporalio/workflow';

/**
 * What the files service and the trash workflow (workflows/files/trash.workflow.ts) exchange. Bundled
 * into the workflow sandbox, so only types and message definitions live here.
 */

export interface FileTrashInput {
  tenantId: string;
  fileId: string;
  /**
   * The deleted_at the deletion wrote (ISO 8601, milliseconds): the purge touches the file only if it
   * is still in the trash from this deletion, not from a later one after a restore.
   */
  deletedAt: string;
  /** FILES_SOFT_DELETE_RETENTION_DAYS in milliseconds; workflows read no configuration, so the starter sends it. */
  retentionMs: number;
}

/** How the trash timer ended: the file purged by it, or left as it was (restored, purged by someone else). */
export interface FileTrashResult {
  purged: boolean;
}

/** The trash timer of a file, named for the Temporal UI; a file deleted again after a restore gets a new run. */
export function fileTrashWorkflowId(fileId: string): string {
  return `files.trash:${fileId}`;
}

/** The file left the trash (POST /files/:id/restore): the timer ends without purging. */
export const fileRestoredSignal = defineSignal('restored');
