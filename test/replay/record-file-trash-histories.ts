// Records the committed histories of the trash timer (test/replay/histories/fileTrash/) on the
// time-skipping server with the real activity (PostgreSQL, a bucket of its own): one purged after the
// retention, one restored first. The generic `npm run record-history` cannot make the file available
// and delete it through the service, nor restore it. Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-file-trash-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does: a committed history
// must replay on any machine, without this machine's payload key.
import { createFileTrashActivities } from '../../activities/files/trash.activities';
import { config } from '../../common/config';
import { runWithRequestContext } from '../../common/context';
import { createLogger } from '../../common/logger';
import type { FilesDeps } from '../../services/files/deps';
import { deleteFile, restoreFile } from '../../services/files/trash';
import { FileTrashTimers } from '../../services/files/trash-client';
import { fileTrashWorkflowId } from '../../workflows/files/trash.messages';
import { makeAvailable } from '../helpers/files';
import { samplePng, stageFile } from '../helpers/files-scan';
import { uniqueTaskQueue } from '../helpers/temporal';
import { createPlainTimeSkippingEnv, createRecordingWorker, recordFilesHistories, writeHistories } from './recording';

const DAY = 86_400_000;

recordFilesHistories('record-file-trash', createPlainTimeSkippingEnv, async ({ temporal: env, owner, app, bucket, tenant }) => {
  const logger = createLogger('record', 'silent');
  const auth = { userId: tenant.admin.id, tenantId: tenant.tenantId, email: tenant.admin.email, roles: ['admin'] };
  const asAdmin = <T>(fn: () => Promise<T>) => runWithRequestContext({ traceId: 'record-file-trash', tenantId: tenant.tenantId, actorId: tenant.admin.id }, fn);
  const recorded: Array<[string, string]> = [];

  /** Deletes an available file through the service, runs `meanwhile`, and waits for the timer's end. */
  async function record(name: string, meanwhile?: (deps: FilesDeps, fileId: string) => Promise<void>): Promise<void> {
    const taskQueue = uniqueTaskQueue('record-files-trash');
    const trashes = new FileTrashTimers(env.client, taskQueue, config().files.softDeleteRetentionDays);
    const deps: FilesDeps = {
      db: app, objectStore: bucket, scans: () => undefined, trashes: () => trashes, settings: config().files, enforcePlanLimits: false, logger,
    };
    const png = await samplePng(64, 64);
    const { fileId, stagingKey } = await stageFile(owner, bucket, tenant.tenantId, { mimeType: 'image/png', content: png, uploadedBy: tenant.member.id });
    await bucket.s3.removeObject(bucket.bucket, stagingKey);
    await makeAvailable(owner, bucket, { id: fileId, tenantId: tenant.tenantId, bucket: 'assets', mimeType: 'image/png' }, png, { icon_32: png });
    const worker = await createRecordingWorker(env, taskQueue, createFileTrashActivities({ appPool: app, objectStore: bucket }));
    await worker.runUntil(async () => {
      await asAdmin(() => deleteFile(deps, auth, fileId));
      await meanwhile?.(deps, fileId);
      await env.client.workflow.getHandle(fileTrashWorkflowId(fileId)).result();
    });
    recorded.push([name, fileTrashWorkflowId(fileId)]);
  }

  await record('v1-purged');
  await record('v1-restored', async (deps, fileId) => {
    await env.sleep(3 * DAY);
    await asAdmin(() => restoreFile(deps, auth, fileId));
  });

  await writeHistories(env.client, 'fileTrash', recorded);
});
