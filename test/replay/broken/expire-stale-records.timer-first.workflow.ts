// The maintenance workflow as it would be after an unguarded change: a timer inserted before the
// sweep without `patched` (docs/decisions/testing.md). Its history, expire-stale-records.timer-first.json, was
// recorded from this file with scripts/record-history.ts --workflows; replayed against the real
// workflow it must fail with a DeterminismViolationError, which proves the replay test can fail.
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { ExpiredRecordCounts, MaintenanceActivities } from '../../../activities/maintenance/expire-stale-records.activities';
import type { ExpireStaleRecordsInput } from '../../../workflows/maintenance/expire-stale-records.workflow';

const maintenance = proxyActivities<MaintenanceActivities>({ startToCloseTimeout: '10 minutes' });

export async function expireStaleRecords(input: ExpireStaleRecordsInput): Promise<ExpiredRecordCounts> {
  await sleep('1 second');
  return maintenance.expireStaleRecords(input.batchSize);
}
