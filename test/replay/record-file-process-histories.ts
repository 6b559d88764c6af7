// Records the committed histories of the image processing workflow (test/replay/histories/fileProcess/)
// on the time-skipping server with the real activities (sharp, PostgreSQL, a bucket of its own): a job
// that completes, one whose image cannot be decoded, and one whose file is deleted while it renders.
// The generic `npm run record-history` cannot make a file available and request its job through the
// service. Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-file-process-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does: a committed history
// must replay on any machine, without this machine's payload key.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { createFileProcessActivities } from '../../activities/files/process.activities';
import { config } from '../../common/config';
import { runWithRequestContext } from '../../common/context';
import { createLogger } from '../../common/logger';
import { createDbPool } from '../../db/pool';
import { requestProcessing, type FileProcessDeps, type FileProcessRequest } from '../../services/files/process';
import { parseJobId } from '../../services/jobs/job-id';
import { fileProcessWorkflowId } from '../../workflows/files/process.messages';
import { createDomainWorker } from '../../workers/temporal/worker';
import { createTestBucket } from '../helpers/audit-export';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { makeAvailable, setStatus } from '../helpers/files';
import { samplePng, seedFilesTenant, stageFile } from '../helpers/files-scan';
import { platformBundle, uniqueTaskQueue } from '../helpers/temporal';

const out = join(__dirname, 'histories', 'fileProcess');

async function main(): Promise<void> {
  await migrateSharedDatabase();
  const owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'record-file-process' });
  const app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'record-file-process-app' });
  const bucket = await createTestBucket('record-file-process');
  const logger = createLogger('record', 'silent');
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: config().temporal.testServerPath } } });
  const workflowBundle = await platformBundle();
  const tenant = await seedFilesTenant(owner);
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
    const worker = await createDomainWorker({
      connection: env.nativeConnection, namespace: 'default', taskQueue, workflowBundle, dataConverter: {}, activities: { ...activities, ...overrides },
    });
    const jobId = await worker.runUntil(async () => {
      const { localId } = parseJobId((await asAdmin(() => requestProcessing(deps, auth, fileId, request))).jobId);
      await env.client.workflow.getHandle(fileProcessWorkflowId(localId)).result();
      return localId;
    });
    recorded.push([name, jobId]);
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

  mkdirSync(out, { recursive: true });
  for (const [name, jobId] of recorded) {
    const history = await env.client.workflow.getHandle(fileProcessWorkflowId(jobId)).fetchHistory();
    writeFileSync(join(out, `${name}.json`), `${historyToJSON(history)}\n`);
    console.log(name, history.events?.length, 'events');
  }
  await env.teardown();
  await bucket.remove();
  await owner.end();
  await app.end();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
