import { log, proxyActivities } from '@temporalio/workflow';
import type { AuditRetentionActivities } from '../../activities/audit/retention.activities';

export interface AuditRetentionInput {
  /** AUDIT_HOT_DAYS: whole months older than this move to cold storage. */
  hotDays: number;
  /** AUDIT_COLD_YEARS: cold objects of months older than this are deleted. */
  coldYears: number;
}

export interface AuditRetentionResult {
  partitionsDropped: string[];
  /** Partitions left for the next run because records kept arriving between archive and drop. */
  partitionsDeferred: string[];
  recordsArchived: number;
  coldObjectsDeleted: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Archive-then-drop rounds per partition and run before it is left to the next run. */
const ROUNDS_PER_PARTITION = 3;

/**
 * An upload of a large month takes a while; the heartbeat says the worker is still at it. Retries
 * are bounded, so a broken store fails the run visibly and the next scheduled run starts over,
 * resuming where this one stopped (every activity is idempotent).
 */
const retention = proxyActivities<AuditRetentionActivities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '30 seconds', backoffCoefficient: 2, maximumAttempts: 5 },
});

/** The cutoffs come from workflow time, so a run replays the same and tests move the clock. */
function yearsBefore(now: number, years: number): string {
  const date = new Date(now);
  date.setUTCFullYear(date.getUTCFullYear() - years);
  return date.toISOString();
}

/**
 * Audit retention, started daily by the Schedule `audit.retention`: moves each monthly partition
 * whose whole month is older than hotDays to the object store (one verified object per tenant),
 * drops it, then deletes cold objects older than coldYears.
 */
export async function auditRetention(input: AuditRetentionInput): Promise<AuditRetentionResult> {
  const now = Date.now();
  const result: AuditRetentionResult = { partitionsDropped: [], partitionsDeferred: [], recordsArchived: 0, coldObjectsDeleted: 0 };
  const partitions = await retention.listArchivablePartitions(new Date(now - input.hotDays * DAY_MS).toISOString());
  for (const partition of partitions) {
    let dropped = false;
    for (let round = 1; round <= ROUNDS_PER_PARTITION && !dropped; round += 1) {
      const archived = await retention.archivePartition(partition);
      const drop = await retention.dropArchivedPartition(partition);
      dropped = drop.dropped;
      if (drop.dropped) result.recordsArchived += archived.records;
      else log.warn('audit partition not dropped; archiving again', { partition: partition.name, round, reason: drop.reason });
    }
    (dropped ? result.partitionsDropped : result.partitionsDeferred).push(partition.name);
  }
  result.coldObjectsDeleted = await retention.deleteExpiredColdObjects(yearsBefore(now, input.coldYears));
  return result;
}
