import { heartbeat } from '@temporalio/activity';
import {
  expireColdExport, updateColdExportJob, writeColdExport, type ColdExportFile, type ColdExportJob, type ColdExportJobDeps,
} from '../../services/audit/export/cold-export-job';

export type { ColdExportJob };

/** The cold export workflow's activities: services/audit/export/cold-export-job.ts, heartbeating the restore. */
export function createAuditColdExportActivities(deps: ColdExportJobDeps) {
  return {
    async markColdExportRunning(job: ColdExportJob): Promise<void> {
      await updateColdExportJob(deps, job, { status: 'running' });
    },

    async writeColdExport(job: ColdExportJob): Promise<ColdExportFile> {
      return writeColdExport(deps, job, heartbeat);
    },

    async markColdExportCompleted(job: ColdExportJob, file: ColdExportFile, expiresAt: string): Promise<void> {
      await updateColdExportJob(deps, job, { status: 'completed', ...file, expiresAt });
    },

    async markColdExportFailed(job: ColdExportJob, error: string): Promise<void> {
      await updateColdExportJob(deps, job, { status: 'failed', error });
    },

    async expireColdExport(job: ColdExportJob, objectKey: string): Promise<void> {
      await expireColdExport(deps, job, objectKey);
    },
  };
}

export type AuditColdExportActivities = ReturnType<typeof createAuditColdExportActivities>;
