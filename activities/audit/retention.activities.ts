import { heartbeat } from '@temporalio/activity';
import {
  archivePartition, deleteExpiredColdObjects, dropArchivedPartition, listArchivablePartitions,
  type ArchiveResult, type AuditRetentionDeps, type DropResult,
} from '../../services/audit/retention';
import type { AuditPartition } from '../../db/queries/audit/audit-retention.queries';

/** The retention Schedule's activities: services/audit/retention.ts, heartbeating its progress. */
export function createAuditRetentionActivities(deps: AuditRetentionDeps) {
  return {
    async listArchivablePartitions(cutoff: string): Promise<AuditPartition[]> {
      return listArchivablePartitions(deps, cutoff);
    },

    async archivePartition(partition: AuditPartition): Promise<ArchiveResult> {
      return archivePartition(deps, partition, heartbeat);
    },

    async dropArchivedPartition(partition: AuditPartition): Promise<DropResult> {
      return dropArchivedPartition(deps, partition);
    },

    async deleteExpiredColdObjects(before: string): Promise<number> {
      return deleteExpiredColdObjects(deps, before, heartbeat);
    },
  };
}

export type AuditRetentionActivities = ReturnType<typeof createAuditRetentionActivities>;
