// Records the committed histories of the daily usage snapshot (test/replay/histories/usageSnapshot/) on
// the time-skipping server with the real activity (PostgreSQL as the owner role: a snapshot covers
// every tenant), with a tenant of its own that has no snapshot yet: a run as the Schedule starts it,
// which takes the day before the workflow's clock and writes that tenant's snapshot, and a run for the
// same day given, a repeat that only fills in tenants still missing. Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-usage-snapshot-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does: a committed history
// must replay on any machine, without this machine's payload key.
import { createUsageSnapshotActivities } from '../../activities/billing/usage-snapshot.activities';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { usageSnapshot, type UsageSnapshotInput } from '../../workflows/billing/usage-snapshot.workflow';
import { USAGE_SNAPSHOT_SCHEDULE_ID, usageSnapshotSchedule } from '../../workers/schedules';
import { seedBillingTenant } from '../helpers/billing';
import { uniqueTaskQueue } from '../helpers/temporal';
import { createRecordingWorker, executeRecordedRun, recordHistories, writeHistories } from './recording';

recordHistories('record-usage-snapshot', async ({ env, owner }) => {
  const taskQueue = uniqueTaskQueue('record-billing-usage-snapshot');
  const worker = await createRecordingWorker(env, taskQueue, createUsageSnapshotActivities({ fleetPool: owner, logger: createLogger('record', 'silent') }));
  const scheduledInput: UsageSnapshotInput = usageSnapshotSchedule().action.args?.[0] ?? {};
  await seedBillingTenant(owner);
  const start = (name: string, input: UsageSnapshotInput) => executeRecordedRun(env.client, name, usageSnapshot, {
    taskQueue, workflowId: `${USAGE_SNAPSHOT_SCHEDULE_ID}:record-${newId()}`, args: [input],
  });

  const recorded = await worker.runUntil(async () => {
    const scheduled = await start('v1-day-before', scheduledInput);
    // The tenant seeded above has no snapshot of any day, so the run must have written one.
    if (scheduled.result.inserted < 1) throw new Error('the scheduled run wrote no snapshot; run the recorder again');
    const repeated = await start('v1-day-given-repeated', { day: scheduled.result.day });
    return [scheduled.run, repeated.run];
  });

  await writeHistories(env.client, 'usageSnapshot', recorded);
});
