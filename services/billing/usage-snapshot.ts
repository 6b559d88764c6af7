import type { Logger } from '../../common/logger';
import type { Progress } from '../../common/progress';
import type { DatabasePool } from '../../db/pool';
import { deleteDailyEventsBefore, insertUsageSnapshots } from '../../db/queries/billing/usage.queries';

export interface UsageSnapshotDeps {
  /** The owner role: a snapshot covers every tenant (a fleet-wide Schedule). */
  fleetPool: DatabasePool;
  logger: Logger;
}

export interface UsageSnapshotResult {
  day: string;
  tenants: number;
  /** Snapshots written by this run; tenants already snapshotted for the day are skipped. */
  inserted: number;
  /** Per-day event counters dropped (older than DAILY_EVENTS_KEPT_DAYS before the day). */
  purgedDailyEvents: number;
}

/** Per-day event counters kept behind the snapshotted day, for late or repeated snapshots. */
const DAILY_EVENTS_KEPT_DAYS = 7;
const TENANTS_PER_BATCH = 500;

function daysBefore(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * Snapshots every tenant's usage for `day` (UTC), in batches of tenants in id order, reporting the
 * running result after each batch. Idempotent per day: a tenant that has the day's snapshot keeps
 * it, so a retried or repeated run only fills in what is missing.
 */
export async function snapshotUsage({ fleetPool, logger }: UsageSnapshotDeps, day: string, progress: Progress): Promise<UsageSnapshotResult> {
  let after: string | null = null;
  const result: UsageSnapshotResult = { day, tenants: 0, inserted: 0, purgedDailyEvents: 0 };
  for (;;) {
    const batch = await insertUsageSnapshots(fleetPool, day, after, TENANTS_PER_BATCH);
    result.tenants += batch.tenants;
    result.inserted += batch.inserted;
    progress(result);
    if (batch.tenants < TENANTS_PER_BATCH || !batch.lastTenantId) break;
    after = batch.lastTenantId;
  }
  result.purgedDailyEvents = await deleteDailyEventsBefore(fleetPool, daysBefore(day, DAILY_EVENTS_KEPT_DAYS));
  logger.info(result, 'usage snapshot taken');
  return result;
}
