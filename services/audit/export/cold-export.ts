import { coldExportWorkflowId, exportJobId } from '../cold-storage';
import type { ExportFormat } from '../../../db/queries/audit/audit-export.queries';
import { problems } from '../../../common/problems';
import { queueExportJob, selectExportJob, type ExportJob } from '../../../db/queries/audit/audit-export.queries';
import { withTenant } from '../../../db/tenant';
import type { auditColdExport } from '../../../workflows/audit/cold-export.workflow';
import type { AuthState } from '../../../common/context';
import type { AuditExportDeps } from './deps';
import { exportFileName, type ExportRequestRange } from './plan';

/** The states of a cold-export job. */
export { EXPORT_JOB_STATUSES } from '../../../db/queries/audit/audit-export.queries';

/**
 * Queues the cold export of a range and starts its workflow; answers the job id. The same tenant,
 * range and format give the same job and workflow id: while that workflow runs (restoring, or
 * keeping the finished file) a repeat finds it (conflict policy USE_EXISTING) instead of starting
 * a second one; once it has ended (the file expired, or it failed) a repeat starts afresh.
 */
export async function requestColdExport(
  deps: AuditExportDeps, auth: AuthState, range: ExportRequestRange, format: ExportFormat,
): Promise<string> {
  const temporal = deps.temporal();
  if (!temporal) throw problems.unavailable('The workflow service is not connected; try again shortly');
  const bounds = { since: range.since.toISOString(), until: range.until.toISOString() };
  const jobId = exportJobId(auth.tenantId, bounds, format);
  // The row exists before the workflow does, so the status can be read right after the 202.
  await withTenant(deps.db, auth.tenantId, (tx) => queueExportJob(tx, {
    tenantId: auth.tenantId, id: jobId, format, range: bounds, requestedBy: auth.userId,
  }));
  await temporal.client.workflow.start<typeof auditColdExport>('auditColdExport', {
    taskQueue: deps.settings.taskQueue,
    workflowId: coldExportWorkflowId(auth.tenantId, jobId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    args: [{ tenantId: auth.tenantId, jobId, format, ...bounds, retentionDays: deps.settings.exportRetentionDays }],
    memo: { tenantId: auth.tenantId },
    staticSummary: `Cold audit export ${bounds.since} to ${bounds.until} (${format})`,
  });
  return jobId;
}

export interface ExportJobStatus extends ExportJob {
  /** A presigned GET of the file while it is kept (completed jobs only). */
  downloadUrl?: string;
  downloadUrlExpiresAt?: string;
}

/** A job of the caller's tenant with, once completed, a short-lived download URL; another tenant's job is not found. */
export async function coldExportStatus(deps: AuditExportDeps, tenantId: string, jobId: string): Promise<ExportJobStatus> {
  const job = await withTenant(deps.analyticsDb, tenantId, (tx) => selectExportJob(tx, tenantId, jobId));
  if (!job) throw problems.notFound('export job');
  if (job.status !== 'completed' || !job.objectKey) return job;
  const ttl = deps.settings.exportUrlTtlSeconds;
  const fileName = exportFileName({ since: new Date(job.since), until: new Date(job.until) }, job.format);
  const downloadUrl = await deps.objectStore.s3.presignedGetObject(deps.objectStore.bucket, job.objectKey, ttl, {
    'response-content-disposition': `attachment; filename="${fileName}"`,
  });
  return { ...job, downloadUrl, downloadUrlExpiresAt: new Date(deps.now().getTime() + ttl * 1000).toISOString() };
}
