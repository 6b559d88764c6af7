import { ApplicationFailure, proxyActivities, setHandler, sleep, upsertMemo } from '@temporalio/workflow';
import type { ColdExportJob, AuditColdExportActivities } from '../../activities/audit/cold-export.activities';
import { coldExportProgressQuery, type ColdExportProgress } from './audit.messages';

export interface ColdExportInput extends ColdExportJob {
  /** AUDIT_EXPORT_RETENTION_DAYS: how long the finished file is kept. */
  retentionDays: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Bookkeeping on the job row: quick, retried until the database answers. */
const jobs = proxyActivities<AuditColdExportActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * Restoring years of records takes long (its activity may run 12 hours, docs/decisions/audit.md); the heartbeat carries
 * the running count (shown in the Temporal UI) and proves the worker is alive.
 */
const restore = proxyActivities<AuditColdExportActivities>({
  startToCloseTimeout: '12 hours',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '30 seconds', backoffCoefficient: 2, maximumAttempts: 5 },
});

function describeFailure(error: unknown): string {
  return error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
}

/**
 * A cold export (GET /audit/export over a range older than AUDIT_HOT_DAYS answered 202 {jobId}).
 * Its workflow id is derived from tenant, range and format, so asking again while it runs finds
 * this run. It writes the file, records it on the job, keeps it for retentionDays and deletes it;
 * the run lasts as long as the file exists, so a request after that starts a fresh export.
 */
export async function auditColdExport(input: ColdExportInput): Promise<ColdExportProgress> {
  const { retentionDays, ...job } = input;
  let progress: ColdExportProgress = { phase: 'restoring' };
  const report = (next: ColdExportProgress) => {
    progress = next;
    upsertMemo({ progress: next });
  };
  setHandler(coldExportProgressQuery, () => progress);
  report(progress);

  await jobs.markColdExportRunning(job);
  let file;
  try {
    file = await restore.writeColdExport(job);
  } catch (error) {
    const reason = describeFailure(error);
    await jobs.markColdExportFailed(job, reason);
    report({ phase: 'failed', error: reason });
    throw ApplicationFailure.nonRetryable(`cold export ${job.jobId} failed: ${reason}`, 'ColdExportFailed');
  }
  const expiresAt = new Date(Date.now() + retentionDays * DAY_MS).toISOString();
  await jobs.markColdExportCompleted(job, file, expiresAt);
  report({ phase: 'completed', records: file.records, objectKey: file.objectKey, expiresAt });

  await sleep(retentionDays * DAY_MS);
  await jobs.expireColdExport(job, file.objectKey);
  report({ phase: 'expired', records: file.records });
  return progress;
}
