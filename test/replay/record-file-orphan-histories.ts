// Records the committed histories of the orphan sweep (test/replay/histories/filesOrphanSweep/) on the
// time-skipping server with the real activities (PostgreSQL, a bucket of its own), for one tenant of
// its own: a first run that marks (one file referenced, one young), and a run a retention later that
// purges, clears a referenced file's stale mark and reads its pages two files at a time. The generic
// `npm run record-history` cannot seed files uploaded days ago nor their references. Run with the
// project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-file-orphan-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does: a committed history
// must replay on any machine, without this machine's payload key.
import { createFileOrphanActivities } from '../../activities/files/orphans.activities';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { filesOrphanSweep } from '../../workflows/files/orphan-sweep.workflow';
import { filesOrphanSweepSchedule } from '../../workers/schedules';
import { availableFileAt, referenceFile, setOrphanedAt } from '../helpers/files-orphans';
import { uniqueTaskQueue } from '../helpers/temporal';
import { createPlainTimeSkippingEnv, createRecordingWorker, recordFilesHistories, writeHistories } from './recording';

const DAY = 86_400_000;

recordFilesHistories('record-file-orphans', createPlainTimeSkippingEnv, async ({ temporal: env, owner, app, bucket, tenant }) => {
  const { orphanRetentionDays } = config().files;
  const now = Date.now();
  const recorded: Array<[string, string]> = [];

  // Two orphans, a referenced file and one inside its grace; all but the last uploaded two days ago.
  await availableFileAt(owner, bucket, tenant.tenantId, 'documents', now - 2 * DAY);
  await availableFileAt(owner, bucket, tenant.tenantId, 'avatars', now - 2 * DAY);
  const referenced = await availableFileAt(owner, bucket, tenant.tenantId, 'documents', now - 2 * DAY);
  await availableFileAt(owner, bucket, tenant.tenantId, 'documents', now - 3_600_000);
  await referenceFile(app, referenced, 'data:lab.things.attachment', newId());

  /** One run for the tenant on the day `at` (the clock pinned, as the workflow test pins it), pages of 2. */
  async function record(name: string, at: number): Promise<void> {
    const taskQueue = uniqueTaskQueue('record-files-orphans');
    const workflowId = `files.orphan-sweep:record-${newId()}`;
    const { args } = filesOrphanSweepSchedule({ files: config().files }).action;
    const worker = await createRecordingWorker(env, taskQueue, createFileOrphanActivities({ appPool: app, fleetPool: owner, objectStore: bucket }));
    const result = await worker.runUntil(env.client.workflow.execute(filesOrphanSweep, {
      taskQueue, workflowId, args: [{ ...args[0], batchSize: 2, tenantId: tenant.tenantId, asOf: new Date(at).toISOString() }],
    }));
    console.log(name, JSON.stringify(result));
    recorded.push([name, workflowId]);
  }

  await record('v1-marked', now);
  // A stale mark on the referenced file (a write that raced the marking), for the review to clear.
  await setOrphanedAt(owner, referenced, now);
  await record('v1-purged', now + orphanRetentionDays * DAY);

  await writeHistories(env.client, 'filesOrphanSweep', recorded);
});
