import type { ColdExportProgress } from '../../../workflows/audit/audit.messages';
import { jobIdOf, parseJobId, type JobKind } from '../../../common/jobs';
import { coldExportWorkflowId } from '../cold-storage';
import { coldExportStatus, type ExportJobStatus } from './cold-export';
import type { AuditExportDeps } from './deps';

/** The kind of a cold export's job handle (GET /v1/jobs/{jobId}). */
export const COLD_EXPORT_JOB = 'audit-cold-export';

/** docs/reference/audit.md, Resources: exporting audit records needs audit.export; following the export's job needs the same. */
export const AUDIT_EXPORT_PERMISSION = 'audit.export';

/** The export job ids of cold-storage.ts (exportJobId). */
const EXPORT_JOB_ID = /^[0-9a-f]{32}$/;

/** The public id of a cold export's job, as its 202 answers it: `audit-cold-export.<exportJobId>`. */
export function coldExportJobHandle(exportJobId: string): string {
  return jobIdOf(COLD_EXPORT_JOB, exportJobId);
}

/**
 * The export job id of either id GET /audit/export/:jobId accepts: the public one its 202 answers,
 * or the bare export job id the 202 answered before jobs had kinds (a client may have kept one).
 */
export function exportJobIdOf(jobId: string): string {
  return jobId.startsWith(`${COLD_EXPORT_JOB}.`) ? parseJobId(jobId).localId : jobId;
}

export interface ColdExportResult {
  format: ExportJobStatus['format'];
  since: string;
  until: string;
  records: number | null;
  bytes: number | null;
  /** Until when the file is kept; after that it is deleted and `expired` is true. */
  expiresAt: string | null;
  expired: boolean;
  downloadUrl?: string;
  downloadUrlExpiresAt?: string;
}

/**
 * The cold export's workflow writes the file and then keeps running while it keeps the file
 * (AUDIT_EXPORT_RETENTION_DAYS), so the job is done once its progress (the memo the workflow
 * upserts) says completed, not when the workflow ends. The result is the file: its job row, with a
 * short-lived download URL while it is kept.
 */
export function coldExportJobKind(deps: AuditExportDeps): JobKind {
  return {
    name: COLD_EXPORT_JOB,
    title: 'cold export',
    permission: AUDIT_EXPORT_PERMISSION,
    localId: EXPORT_JOB_ID,
    workflowId: coldExportWorkflowId,
    async outcome(execution) {
      const progress = execution.memo.progress as ColdExportProgress | undefined;
      if (execution.status === 'running' && progress?.phase !== 'completed') return undefined;
      const job = await coldExportStatus(deps, execution.tenantId, execution.localId);
      const { format, since, until, records, bytes, expiresAt, downloadUrl, downloadUrlExpiresAt } = job;
      const result: ColdExportResult = {
        format, since, until, records, bytes, expiresAt, expired: job.status === 'expired',
        ...(downloadUrl ? { downloadUrl, downloadUrlExpiresAt } : {}),
      };
      return { completedAt: job.completedAt, result };
    },
  };
}
