import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Config } from '../../common/config';
import type { fileScan } from '../../workflows/files/scan.workflow';
import { fileScanWorkflowId, type FileScanInput } from '../../workflows/files/files.messages';

/** What the scan workflow needs of the configuration; workflows read none themselves. */
export interface FileScanSettings {
  /** FILES_STAGING_TTL_HOURS, in milliseconds. */
  stagingTtlMs: number;
  /** NOTIFY_TASK_QUEUE. */
  notifyTaskQueue: string;
}

export function fileScanSettingsOf(cfg: Pick<Readonly<Config>, 'files' | 'mail'>): FileScanSettings {
  return { stagingTtlMs: cfg.files.stagingTtlHours * 3_600_000, notifyTaskQueue: cfg.mail.taskQueue };
}

/**
 * Starts the scan workflow of a staged file (workflows/files/scan.workflow.ts) under the workflow id
 * `files.scan:<fileId>`: one workflow per file, ever. A start while it runs finds the running one
 * (conflict policy USE_EXISTING) and a start after it has finished starts nothing (reuse policy
 * REJECT_DUPLICATE), so a retried upload request never scans or publishes twice.
 */
export class FileScanStarter {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    /** fileScanSettingsOf(config). */
    private readonly settings: FileScanSettings,
  ) {}

  async start(input: { tenantId: string; fileId: string; staged?: boolean }): Promise<void> {
    const args: [FileScanInput] = [{ ...input, ...this.settings }];
    try {
      await this.client.workflow.start<typeof fileScan>('fileScan', {
        taskQueue: this.taskQueue,
        workflowId: fileScanWorkflowId(input.fileId),
        args,
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      // Its scan ran before and has finished: the file is already where it ends.
      if (error instanceof WorkflowExecutionAlreadyStartedError) return;
      throw error;
    }
  }
}
