import { WorkflowNotFoundError, type Client, type WorkflowExecutionStatusName } from '@temporalio/client';
import { runWithRequestContext } from '../../common/context';
import type { Logger } from '../../common/logger';
import type { Progress } from '../../common/progress';
import type { DatabasePool } from '../../db/pool';
import { selectFile } from '../../db/queries/files/files.queries';
import { selectStagingSweepPage, type StagingSweepPosition, type StagingSweepRow } from '../../db/queries/files/staging-sweep.queries';
import { withTenant } from '../../db/tenant';
import { fileScanWorkflowId } from '../../workflows/files/files.messages';
import { FileScanStarter, type FileScanSettings } from './scan-client';

/**
 * The safety net behind the uploads' hand-over to their scan (docs/decisions/files.md, Staging
 * sweep). Every upload (upload.ts, presign.ts, tus.ts) records its file pending_scan and starts its
 * scan workflow right after (staging.ts recordStagedFile, then startScan); the workflow owns every
 * timer of the file (the staging TTL, the wait for a PUT). A gateway that stops between the two
 * (kill -9, a lost host) leaves a file no workflow will ever move: it holds a staging slot and its
 * bytes count as the tenant's storage for good. The Schedule `files.staging-sweep` starts the scan
 * of such a file, as the gateway would have, once it has been recorded longer than a grace that no
 * hand-over takes.
 */

export type { StagingSweepPosition };

export interface StagingSweepDeps {
  /** The owner role, for the one look across tenants: which files wait, and whose they are. */
  fleetPool: DatabasePool;
  /** The application role: each file is read again in its tenant's transaction, under row-level security. */
  appPool: DatabasePool;
  logger: Logger;
}

/** Where and with what the scans are started: the gateway's own starter settings (fileScanSettingsOf) and task queue. */
export interface StagingSweepScan extends FileScanSettings {
  /** FILES_TASK_QUEUE. */
  taskQueue: string;
}

export interface StagingSweepPage {
  /** ISO 8601: only files recorded before it (the run's clock less FILES_STAGING_SWEEP_GRACE_MINUTES). */
  createdBefore: string;
  /** The last file the previous page looked at; null from the oldest. */
  after: StagingSweepPosition | null;
  limit: number;
  /** Only this tenant's files (an operator's run, the tests'); null for every tenant's. */
  tenantId: string | null;
  scan: StagingSweepScan;
}

export interface StagingSweepCounts {
  /** pending_scan files past the grace looked at. */
  inspected: number;
  /** Files with no scan workflow at all, whose scan the sweep started. */
  started: number;
  /** Left alone: their scan runs (waiting for a presigned PUT or the rest of a tus upload, or for clamd). */
  running: number;
  /** Left alone: their scan workflow has closed with the file still pending (terminated by hand, a bug); logged for an operator. */
  closed: number;
}

export interface StagingSweepPageResult extends StagingSweepCounts {
  /** Where the next page starts: the last file looked at, or null when the page was the last. */
  next: StagingSweepPosition | null;
}

/** The state of a file's scan workflow: none ever started (or none Temporal still keeps), running, or closed with its status. */
async function scanWorkflowOf(client: Client, fileId: string): Promise<'none' | 'running' | WorkflowExecutionStatusName> {
  try {
    const { status } = await client.workflow.getHandle(fileScanWorkflowId(fileId)).describe();
    return status.name === 'RUNNING' || status.name === 'PAUSED' ? 'running' : status.name;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'none';
    throw error;
  }
}

/**
 * Starts the scan of a file that has none, with the gateway's starter (same workflow id, conflict
 * policy USE_EXISTING, reuse policy REJECT_DUPLICATE: a start that meets another is harmless, and a
 * closed run is never followed by a second). The file is read again in its tenant's transaction
 * first: one that left pending_scan meanwhile is left alone. The start names the tenant and the
 * uploader, as the upload request's context would have: the scan's activities work for that tenant,
 * and its audit records name the uploader, whose upload this finishes.
 */
async function startScanOf(
  { appPool, logger }: StagingSweepDeps, starter: FileScanStarter, { tenantId, id }: StagingSweepRow, traceId: string,
): Promise<boolean> {
  const file = await withTenant(appPool, tenantId, (tx) => selectFile(tx, tenantId, id));
  if (file?.status !== 'pending_scan') return false;
  const context = { traceId, tenantId, ...(file.uploadedBy !== null && { actorId: file.uploadedBy }) };
  await runWithRequestContext(context, () => starter.start({ tenantId, fileId: id, sizeBytes: file.sizeBytes }));
  logger.warn(
    { tenantId, fileId: id, createdAt: file.createdAt, waitedSeconds: Math.round((Date.now() - Date.parse(file.createdAt)) / 1000) },
    'scan started by the staging sweep: the upload that recorded the file never started it',
  );
  return true;
}

/**
 * One page of the sweep: the next `limit` pending_scan files recorded before `createdBefore`
 * (oldest first, every tenant's), each looked up in Temporal by its scan workflow's id. A file with
 * no workflow gets its scan started; one whose scan runs (a presigned upload waiting for its PUT, an
 * unfinished tus upload, a scan waiting for clamd) or has closed is left alone. Safe to repeat: a
 * retried page finds the scans it started running. `traceId` ties the started scans' log lines to
 * the sweep's.
 */
export async function startStrandedScans(
  deps: StagingSweepDeps, client: Client, page: StagingSweepPage, traceId: string, progress: Progress,
): Promise<StagingSweepPageResult> {
  const { scan } = page;
  const rows = await selectStagingSweepPage(deps.fleetPool, page);
  const starter = new FileScanStarter(client, scan.taskQueue, { stagingTtlMs: scan.stagingTtlMs, notifyTaskQueue: scan.notifyTaskQueue });
  const counts: StagingSweepCounts = { inspected: 0, started: 0, running: 0, closed: 0 };
  for (const row of rows) {
    const workflow = await scanWorkflowOf(client, row.id);
    if (workflow === 'running') {
      counts.running += 1;
    } else if (workflow !== 'none') {
      counts.closed += 1;
      deps.logger.warn(
        { tenantId: row.tenantId, fileId: row.id, workflowId: fileScanWorkflowId(row.id), workflowStatus: workflow },
        'a pending_scan file whose scan workflow has closed: not scanned again; reject it, or let Temporal\'s retention drop the run',
      );
    } else if (await startScanOf(deps, starter, row, traceId)) {
      counts.started += 1;
    }
    counts.inspected += 1;
    progress(counts);
  }
  const last = rows.at(-1);
  return { ...counts, next: last && rows.length === page.limit ? { createdAt: last.position, id: last.id } : null };
}
