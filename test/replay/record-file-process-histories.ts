// Records the committed histories of the image processing workflow (test/replay/histories/fileProcess/)
// on the time-skipping server with the real activities (sharp, PostgreSQL, a bucket of its own): a job
// that completes, one whose image cannot be decoded, and one whose file is deleted while it renders.
// The generic `npm run record-history` cannot make a file available and request its job through the
// service. Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-file-process-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does: a committed history
// must replay on any machine, without this machine's payload key.
import { createFileProcessActivities } from '../../activities/files/process.activities';
import { config } from '../../common/config';
import { runWithRequestContext } from '../../common/context';
import { createLogger } from '../../common/logger';
import { requestProcessing, type FileProcessDeps, type FileProcessRequest } from '../../services/files/process';
import { parseJobId } from '../../common/jobs';
import { fileProcessWorkflowId } from '../../workflows/files/process.messages';
import { makeAvailable, setStatus } from '../helpers/files';
import { samplePng, stageFile } from '../helpers/files-scan';
import { uniqueTaskQueue } from '../helpers/temporal';
import { createPlainTimeSkippingEnv, createRecordingWorker, recordFilesHistories, writeHistories } from './recording';

recordFilesHistories('record-file-process', createPlainTimeSkippingEnv, async ({ temporal: env, owner, app, bucket, tenant }) => {
  const logger = createLogger('record', 'silent');
  const auth = { userId: tenant.admin.id, tenantId: tenant.tenantId, email: tenant.admin.email, roles: ['admin'] };
  const asAdmin = <T>(fn: () => Promise<T>) => runWithRequestContext({ traceId: 'record-file-process', tenantId: tenant.tenantId, actorId: tenant.admin.id }, fn);
  const activities = createFileProcessActivities({ appPool: app, objectStore: bucket, logger });
  const recorded: Array<[string, string]> = [];

  /** Requests a job on an available PNG through the service, and waits for the workflow's end. */
  async function record(name: string, content: Buffer, request: FileProcessRequest, overrides: object = {}): Promise<void> {
    const taskQueue = uniqueTaskQueue('record-files-process');
    const deps: FileProcessDeps = {
      db: app, objectStore: bucket, scans: () => undefined, trashes: () => undefined, temporal: () => ({ client: env.client, connection: env.connection }),
      settings: { ...config().files, taskQueue }, enforcePlanLimits: false, logger,
    };
    const { fileId, stagingKey } = await stageFile(owner, bucket, tenant.tenantId, { mimeType: 'image/png', content, uploadedBy: tenant.member.id });
    await bucket.s3.removeObject(bucket.bucket, stagingKey);
    await makeAvailable(owner, bucket, { id: fileId, tenantId: tenant.tenantId, bucket: 'assets', mimeType: 'image/png' }, content, { icon_32: await samplePng(32, 32) });
    const worker = await createRecordingWorker(env, taskQueue, { ...activities, ...overrides });
    const jobId = await worker.runUntil(async () => {
      const { localId } = parseJobId((await asAdmin(() => requestProcessing(deps, auth, fileId, request))).jobId);
      await env.client.workflow.getHandle(fileProcessWorkflowId(localId)).result();
      return localId;
    });
    recorded.push([name, fileProcessWorkflowId(jobId)]);
  }

  const png = await samplePng(640, 480);
  await record('v1-completed', png, {
    operations: [{ crop: { x: 0, y: 0, width: 400, height: 300 } }, { resize: { width: 200 } }, { rotate: { degrees: 90 } }, { convert: { format: 'webp' } }],
    quality: 80,
  });
  await record('v1-unreadable', png.subarray(0, Math.floor(png.length / 2)), { operations: [{ rotate: { degrees: 180 } }], quality: 85 });
  await record('v1-file-deleted', png, { operations: [{ resize: { width: 100 } }], quality: 85 }, {
    async renderFileVersion(...args: Parameters<typeof activities.renderFileVersion>) {
      const version = await activities.renderFileVersion(...args);
      await setStatus(owner, args[0].fileId, 'deleted');
      return version;
    },
  });

  await writeHistories(env.client, 'fileProcess', recorded);
});
