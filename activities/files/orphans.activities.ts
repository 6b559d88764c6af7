import { heartbeat } from '@temporalio/activity';
import {
  markOrphans, purgeOrphans, reviewOrphans, tenantsWithOrphanCandidates, type FileOrphanDeps, type OrphanSweepRun,
} from '../../services/files/orphans';

export type { OrphanSweepRun };

/** The orphan sweep's activities (workflows/files/orphan-sweep.workflow.ts): services/files/orphans.ts, each safe to repeat. */
export function createFileOrphanActivities(deps: FileOrphanDeps) {
  return {
    /** The next tenants (id order) with available files in a swept bucket. */
    async orphanSweepTenants(after: string | null, limit: number): Promise<string[]> {
      return [...await tenantsWithOrphanCandidates(deps, after, limit)];
    },

    async markOrphans(tenantId: string, run: OrphanSweepRun): Promise<{ marked: number }> {
      return markOrphans(deps, tenantId, run, heartbeat);
    },

    async reviewOrphans(tenantId: string, run: OrphanSweepRun, after: string | null): Promise<{ due: string[]; cleared: number; next: string | null }> {
      return reviewOrphans(deps, tenantId, run, after);
    },

    async purgeOrphans(tenantId: string, run: OrphanSweepRun, fileIds: string[]): Promise<{ purged: number }> {
      return purgeOrphans(deps, tenantId, run, fileIds, heartbeat);
    },
  };
}

export type FileOrphanActivities = ReturnType<typeof createFileOrphanActivities>;
