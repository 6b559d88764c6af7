import { proxyActivities } from '@temporalio/workflow';
import type { UsageSnapshotActivities, UsageSnapshotResult } from '../../activities/billing/usage-snapshot.activities';

export interface UsageSnapshotInput {
  /** The UTC day (YYYY-MM-DD) to snapshot; by default the day before the run started. */
  day?: string;
}

const billing = proxyActivities<UsageSnapshotActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '30 seconds', backoffCoefficient: 2, maximumAttempts: 5 },
});

/**
 * The daily usage snapshot behind GET /billing/usage/history, started by a Schedule shortly after
 * midnight UTC: it records the day that has just ended (its events, the other counters as they
 * stand). Workflow time is deterministic, so a replay computes the same day.
 */
export async function usageSnapshot(input: UsageSnapshotInput = {}): Promise<UsageSnapshotResult> {
  const day = input.day ?? new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  return billing.snapshotUsage(day);
}
