import { proxyActivities } from '@temporalio/workflow';
import type { ExpiredRecordCounts, MaintenanceActivities } from '../../activities/maintenance/expire-stale-records.activities';

export interface ExpireStaleRecordsInput {
  /** Rows deleted per statement (config.maintenance.batchSize, passed in by the Schedule). */
  batchSize: number;
}

/**
 * Retries are bounded so a broken database fails the run visibly instead of retrying until the next
 * run; the Schedule (workers/schedules.ts) simply starts a fresh one later. The heartbeat timeout lets
 * a worker that died mid-sweep be noticed within a minute, not only at the ten-minute limit.
 */
const maintenance = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumAttempts: 3 },
});

/** Deletes expired idempotency keys, one-time tokens and refresh-token families and expires old dead letters, across all tenants; started by a Schedule. */
export async function expireStaleRecords(input: ExpireStaleRecordsInput): Promise<ExpiredRecordCounts> {
  return maintenance.expireStaleRecords(input.batchSize);
}
