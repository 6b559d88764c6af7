import { defineQuery } from '@temporalio/workflow';

/**
 * Messages of the audit workflows, shared by the workflows and whoever asks them (the gateway, the
 * Temporal UI's query tab). Definitions only: importing this file pulls in no workflow code.
 */

export type ColdExportPhase = 'restoring' | 'completed' | 'failed' | 'expired';

export interface ColdExportProgress {
  phase: ColdExportPhase;
  /** Records written, once the file is complete. */
  records?: number;
  objectKey?: string;
  /** When the file will be deleted (ISO 8601). */
  expiresAt?: string;
  error?: string;
}

/** Where a cold export stands; also shown in the workflow's memo for the Temporal UI's list. */
export const coldExportProgressQuery = defineQuery<ColdExportProgress>('coldExportProgress');
