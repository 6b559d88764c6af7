import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Priority } from '@temporalio/common';
import type { Config } from '../../common/config';
import type { fileScan } from '../../workflows/files/scan.workflow';
import { fileScanWorkflowId, type FileScanInput } from '../../workflows/files/files.messages';
import type { FileScanRequest, FileScans } from './deps';

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
 * The task priority of a scan started while the backlog is over FILES_SCAN_PRIORITY_THRESHOLD
 * (docs/reference/files.md#rule-21). Temporal's keys run from 1 (first)
 * to 5 (last) and an unset key is 3, so these go before the backlog that built up at 3, and before
 * the re-scan at 5 (workflows/files/rescan.workflow.ts). docs/decisions/files.md, Scan priority.
 */
export const BACKLOG_SCAN_PRIORITY: Readonly<Priority> = { priorityKey: 2 };

/** The priority of a scan started while `backlog` scans wait: none (the default) up to the threshold. */
export function scanPriorityOf(backlog: number, threshold: number): Priority | undefined {
  return backlog > threshold ? BACKLOG_SCAN_PRIORITY : undefined;
}

/** How long one reading of the backlog serves every upload: a start never waits for more than one reading. */
const BACKLOG_READING_TTL_MS = 5_000;

/** temporal.api.enums.v1.TaskQueueType WORKFLOW and ACTIVITY (the proto package is not ours to import). */
const TASK_QUEUE_TYPES = [1, 2];

/**
 * The scans waiting: the files task queue's approximate backlog (workflow and activity tasks no
 * worker has taken yet), as Temporal's matching service counts it (DescribeTaskQueue with stats), so
 * no tenant's rows need counting. One reading serves the starter's scans for BACKLOG_READING_TTL_MS
 * (the gateway keeps one starter per Temporal client); a failed reading counts as no backlog, since
 * the priority only orders a backlog and must never fail an upload.
 */
class ScanBacklog {
  private reading: { count: Promise<number>; at: number } | undefined;

  constructor(private readonly client: Client, private readonly taskQueue: string) {}

  read(): Promise<number> {
    const now = Date.now();
    if (!this.reading || now - this.reading.at >= BACKLOG_READING_TTL_MS) this.reading = { count: this.count(), at: now };
    return this.reading.count;
  }

  private async count(): Promise<number> {
    try {
      const counts = await Promise.all(TASK_QUEUE_TYPES.map(async (taskQueueType) => {
        const { stats } = await this.client.workflowService.describeTaskQueue({
          namespace: this.client.options.namespace,
          taskQueue: { name: this.taskQueue },
          taskQueueType,
          reportStats: true,
        });
        return Number(stats?.approximateBacklogCount ?? 0);
      }));
      return counts[0] + counts[1];
    } catch {
      return 0;
    }
  }
}

/**
 * Starts the scan workflow of a staged file (workflows/files/scan.workflow.ts) under the workflow id
 * `files.scan:<fileId>`: one workflow per file, ever. A start while it runs finds the running one
 * (conflict policy USE_EXISTING) and a start after it has finished starts nothing (reuse policy
 * REJECT_DUPLICATE), so a retried upload request never scans or publishes twice.
 */
export class FileScanStarter implements FileScans {
  private readonly backlog: ScanBacklog;

  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    /** fileScanSettingsOf(config). */
    private readonly settings: FileScanSettings,
    /**
     * FILES_SCAN_PRIORITY_THRESHOLD: above this many scans waiting, a scan starts with
     * BACKLOG_SCAN_PRIORITY. Unset: the backlog is not read and every scan has the default priority.
     */
    private readonly priorityThreshold?: number,
  ) {
    this.backlog = new ScanBacklog(client, taskQueue);
  }

  /** staged false with `uploadTtlMs`: a presigned upload, whose PUT the workflow waits that long for (fileStaged). */
  async start(input: FileScanRequest): Promise<void> {
    const args: [FileScanInput] = [{ ...input, ...this.settings }];
    const priority = this.priorityThreshold === undefined
      ? undefined : scanPriorityOf(await this.backlog.read(), this.priorityThreshold);
    try {
      await this.client.workflow.start<typeof fileScan>('fileScan', {
        taskQueue: this.taskQueue,
        workflowId: fileScanWorkflowId(input.fileId),
        args,
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        // Its activities inherit it.
        ...(priority && { priority }),
      });
    } catch (error) {
      // Its scan ran before and has finished: the file is already where it ends.
      if (error instanceof WorkflowExecutionAlreadyStartedError) return;
      throw error;
    }
  }
}
