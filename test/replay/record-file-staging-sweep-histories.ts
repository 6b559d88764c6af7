// Records the committed histories of the staging sweep (test/replay/histories/filesStagingSweep/) on the
// time-skipping server with the real activities (PostgreSQL, clamd, a bucket of its own), for one tenant
// of its own: a run that finds a file left as a gateway killed between recording it and starting its
// scan leaves it, and starts that scan (which then makes the file available), and a second run that finds
// nothing left to start. The generic `npm run record-history` cannot seed a file recorded minutes ago
// without its workflow. Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-file-staging-sweep-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does: a committed history
// must replay on any machine, without this machine's payload key.
import { createFileScanActivities } from '../../activities/files/scan.activities';
import { createFileStagingSweepActivities } from '../../activities/files/staging-sweep.activities';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { sql } from '../../db/pool';
import { createClamdScanner } from '../../services/files/scanner';
import { fileScanWorkflowId } from '../../workflows/files/files.messages';
import { filesStagingSweep } from '../../workflows/files/staging-sweep.workflow';
import { filesStagingSweepSchedule } from '../../workers/schedules';
import { samplePng, stageFile } from '../helpers/files-scan';
import { uniqueTaskQueue } from '../helpers/temporal';
import { createPlainTimeSkippingEnv, createRecordingWorker, recordFilesHistories, writeHistories } from './recording';

recordFilesHistories('record-file-staging-sweep', createPlainTimeSkippingEnv, async ({ temporal: env, owner, app, bucket, tenant }) => {
  const logger = createLogger('record', 'silent');
  const taskQueue = uniqueTaskQueue('record-files-staging-sweep');
  const worker = await createRecordingWorker(env, taskQueue, {
    ...createFileScanActivities({ appPool: app, objectStore: bucket, scanner: createClamdScanner(config().clamav), logger }),
    ...createFileStagingSweepActivities({ fleetPool: owner, appPool: app, logger }),
  });
  const [input] = filesStagingSweepSchedule({ cfg: config() }).action.args;
  const recorded: Array<[string, string]> = [];

  // A pending_scan row and its staged object, recorded ten minutes ago, with no scan workflow.
  const file = await stageFile(owner, bucket, tenant.tenantId, {
    mimeType: 'image/png', originalName: 'stranded.png', content: await samplePng(64, 48), uploadedBy: tenant.member.id,
  });
  await owner.query(sql.unsafe`UPDATE files SET created_at = date_trunc('milliseconds', now()) - interval '10 minutes' WHERE id = ${file.fileId}`);

  /** One run for the tenant, as the Schedule starts it, its scans on the recording worker's queue. */
  async function record(name: string): Promise<void> {
    const workflowId = `files.staging-sweep:record-${newId()}`;
    const result = await env.client.workflow.execute(filesStagingSweep, {
      taskQueue, workflowId,
      args: [{ ...input, scan: { ...input.scan, taskQueue, notifyTaskQueue: taskQueue }, tenantId: tenant.tenantId, asOf: new Date().toISOString() }],
    });
    console.log(name, JSON.stringify(result));
    recorded.push([name, workflowId]);
  }

  await worker.runUntil(async () => {
    await record('v1-started');
    console.log('scan', JSON.stringify(await env.client.workflow.getHandle(fileScanWorkflowId(file.fileId)).result()));
    await record('v1-nothing-due');
  });

  await writeHistories(env.client, 'filesStagingSweep', recorded);
});
