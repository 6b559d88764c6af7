import { heartbeat } from '@temporalio/activity';
import { snapshotUsage, type UsageSnapshotDeps, type UsageSnapshotResult } from '../../services/billing/usage-snapshot';

export type { UsageSnapshotResult };

/** The usage snapshot Schedule's activity: services/billing/usage-snapshot.ts, heartbeating each batch. */
export function createUsageSnapshotActivities(deps: UsageSnapshotDeps) {
  return {
    async snapshotUsage(day: string): Promise<UsageSnapshotResult> {
      return snapshotUsage(deps, day, heartbeat);
    },
  };
}

export type UsageSnapshotActivities = ReturnType<typeof createUsageSnapshotActivities>;
