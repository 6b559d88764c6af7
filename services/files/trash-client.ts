import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { fileTrash } from '../../workflows/files/trash.workflow';
import { fileRestoredSignal, fileTrashWorkflowId, type FileTrashInput } from '../../workflows/files/trash.messages';
import type { FileTrashes } from './deps';

const DAY_MS = 86_400_000;

/**
 * Starts and stops the trash timer of a deleted file (workflows/files/trash.workflow.ts) under the
 * workflow id `files.trash:<fileId>`. A start happens only when a file has just moved available →
 * deleted, so a run still open under that id belongs to an earlier deletion that was restored (its
 * `restored` signal may not have been processed yet): it is terminated (conflict policy
 * TERMINATE_EXISTING) rather than reused, since reusing a run that is about to end on that signal
 * would leave the new deletion without a timer. A closed run does not block a new one (reuse policy
 * ALLOW_DUPLICATE): a file deleted again after a restore gets a new run.
 */
export class FileTrashTimers implements FileTrashes {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly retentionDays: number,
  ) {}

  async start(input: Omit<FileTrashInput, 'retentionMs'>): Promise<void> {
    const args: [FileTrashInput] = [{ ...input, retentionMs: this.retentionDays * DAY_MS }];
    await this.client.workflow.start<typeof fileTrash>('fileTrash', {
      taskQueue: this.taskQueue,
      workflowId: fileTrashWorkflowId(input.fileId),
      args,
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
  }

  /** The file was restored; no run (already ended, or never started) is nothing to stop. */
  async restored(fileId: string): Promise<void> {
    try {
      await this.client.workflow.getHandle(fileTrashWorkflowId(fileId)).signal(fileRestoredSignal);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return;
      throw error;
    }
  }
}
