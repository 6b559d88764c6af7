// Records the committed histories of the scan workflow (test/replay/histories/fileScan/) on the
// time-skipping server with the real activities (PostgreSQL, clamd, a bucket of its own, Mailpit),
// one per way a scan ends; the generic `npm run record-history` cannot stage the file each run needs,
// nor send the fileStaged signal. Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-file-scan-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does: a committed history
// must replay on any machine, without this machine's payload key. A name prefix as argument records
// only those histories (`v2-` the presigned uploads' own wait, `v3-` its last look at staging, `v4-` the scan,
// promotion and thumbnails in one activity, `v5-` that step local for a file of at most 10 MB), leaving the committed others as they are. A history shows the workflow
// code of its day: the committed v1 clean, empty, clamd-down and infected runs took three steps; they are recorded
// anew as v4.
import { createFileScanActivities } from '../../activities/files/scan.activities';
import { createNotifyActivities } from '../../activities/notify/mail.activities';
import { config, type Config } from '../../common/config';
import { createLogger } from '../../common/logger';
import { presignedStagingKeyOf } from '../../services/files/object-keys';
import { FileScanStarter, fileScanSettingsOf, type FileScanSettings } from '../../services/files/scan-client';
import { createClamdScanner } from '../../services/files/scanner';
import { fileScanWorkflowId, fileStagedSignal } from '../../workflows/files/files.messages';
import { EICAR, samplePng, stageFile, type StageOptions } from '../helpers/files-scan';
import { uniqueTaskQueue } from '../helpers/temporal';
import { createPlainTimeSkippingEnv, createRecordingWorker, recordFilesHistories, writeHistories } from './recording';

const HOUR = 3_600_000;

recordFilesHistories('record-file-scan', createPlainTimeSkippingEnv, async ({ temporal: env, owner, app, bucket, smtp, tenant }) => {
  const logger = createLogger('record', 'silent');
  /** A worker of its own queue, scanning with the clamd at `clamav`, as the platform assembles it but without the codec. */
  const workerFor = (taskQueue: string, clamav: Config['clamav']) => createRecordingWorker(env, taskQueue, {
    ...createFileScanActivities({ appPool: app, objectStore: bucket, scanner: createClamdScanner(clamav), logger }),
    ...createNotifyActivities({ smtp, logger }),
  });
  const recorded: Array<[string, string]> = [];

  interface Run {
    file: StageOptions;
    staged?: boolean;
    /** A presigned upload's wait for its PUT (services/files/presign.ts). */
    uploadTtlMs?: number;
    settings?: Partial<FileScanSettings>;
    /** After the start, before the result. */
    meanwhile?: (fileId: string) => Promise<void>;
  }

  const only = process.argv[2] ?? '';
  async function record(name: string, clamav: Config['clamav'], { file, staged, uploadTtlMs, settings, meanwhile }: Run): Promise<void> {
    if (!name.startsWith(only)) return;
    const taskQueue = uniqueTaskQueue('record-files');
    const starter = new FileScanStarter(env.client, taskQueue, { ...fileScanSettingsOf(config()), notifyTaskQueue: taskQueue, ...settings });
    const { fileId, sizeBytes } = await stageFile(owner, bucket, tenant.tenantId, file);
    await (await workerFor(taskQueue, clamav)).runUntil(async () => {
      await starter.start({ tenantId: tenant.tenantId, fileId, sizeBytes, staged, uploadTtlMs });
      await meanwhile?.(fileId);
      await env.client.workflow.getHandle(fileScanWorkflowId(fileId)).result();
    });
    recorded.push([name, fileScanWorkflowId(fileId)]);
  }

  const clamd = config().clamav;
  await record('v1-clean-image-thumbnails', clamd, { file: { mimeType: 'image/png', originalName: 'diagram.png', content: await samplePng(640, 480) } });
  await record('v1-presigned-signal-document', clamd, {
    file: { mimeType: 'text/plain', originalName: 'notes.txt', sizeBytes: 6 },
    staged: false,
    meanwhile: async (fileId) => {
      await env.sleep(HOUR);
      const content = Buffer.from('notes\n');
      await bucket.s3.putObject(bucket.bucket, presignedStagingKeyOf(tenant.tenantId, fileId), content, content.length);
      await env.client.workflow.getHandle(fileScanWorkflowId(fileId)).signal(fileStagedSignal);
    },
  });
  await record('v1-presigned-expired', clamd, { file: { mimeType: 'application/pdf', originalName: 'never-sent.pdf' }, staged: false });
  // The presign route's start: the URL's 15 minutes and the grace (services/files/presign.ts).
  const presignWait = 20 * 60_000;
  await record('v2-presigned-upload-expired', clamd, {
    file: { mimeType: 'application/pdf', originalName: 'never-sent.pdf' }, staged: false, uploadTtlMs: presignWait,
  });
  /** A presigned upload of notes.txt whose PUT lands ten minutes into the wait, announced by fileStaged or not. */
  const presignedNotes = (noticed: boolean): Run => ({
    file: { mimeType: 'text/plain', originalName: 'notes.txt', sizeBytes: 6 },
    staged: false,
    uploadTtlMs: presignWait,
    meanwhile: async (fileId) => {
      await env.sleep(10 * 60_000);
      const content = Buffer.from('notes\n');
      await bucket.s3.putObject(bucket.bucket, presignedStagingKeyOf(tenant.tenantId, fileId), content, content.length);
      if (noticed) await env.client.workflow.getHandle(fileScanWorkflowId(fileId)).signal(fileStagedSignal);
    },
  });
  await record('v2-presigned-put-noticed', clamd, presignedNotes(true));
  // The last look at staging when the wait ends (patch files-presign-last-look): nothing there, and a
  // PUT whose notification never came.
  await record('v3-presigned-upload-expired', clamd, {
    file: { mimeType: 'application/pdf', originalName: 'never-sent.pdf' }, staged: false, uploadTtlMs: presignWait,
  });
  await record('v3-presigned-put-unnoticed', clamd, presignedNotes(false));
  await record('v4-clean-image-thumbnails', clamd, { file: { mimeType: 'image/png', originalName: 'diagram.png', content: await samplePng(640, 480) } });
  await record('v4-presigned-put-unnoticed', clamd, presignedNotes(false));
  await record('v4-empty-unscannable', clamd, { file: { mimeType: 'text/plain', originalName: 'empty.txt', content: Buffer.alloc(0) } });
  const infectedMailed: Run = {
    file: { mimeType: 'application/octet-stream', originalName: 'invoice.pdf.exe', content: Buffer.from(EICAR) },
    meanwhile: async (fileId) => {
      await env.client.workflow.getHandle(fileScanWorkflowId(fileId)).result();
      for (const to of [tenant.owner.email, tenant.admin.email]) {
        await env.client.workflow.getHandle(`notify.email:files:${tenant.tenantId}:infected:${fileId}:${to}`).result();
      }
    },
  };
  // Nothing listens on port 1: the scan is retried until the (shortened) staging TTL cancels it.
  await record('v4-clamd-down-expired', { host: '127.0.0.1', port: 1 }, {
    file: { mimeType: 'text/plain', originalName: 'late.txt', content: Buffer.from('late\n') }, settings: { stagingTtlMs: 5 * 60_000 },
  });
  // v5: a file of at most 10 MB in a local activity; a larger one still takes the activity.
  await record('v5-clean-image-thumbnails', clamd, { file: { mimeType: 'image/png', originalName: 'diagram.png', content: await samplePng(640, 480) } });
  await record('v5-presigned-put-unnoticed', clamd, presignedNotes(false));
  await record('v5-empty-unscannable', clamd, { file: { mimeType: 'text/plain', originalName: 'empty.txt', content: Buffer.alloc(0) } });
  await record('v5-clamd-down-expired', { host: '127.0.0.1', port: 1 }, {
    file: { mimeType: 'text/plain', originalName: 'late.txt', content: Buffer.from('late\n') }, settings: { stagingTtlMs: 5 * 60_000 },
  });
  await record('v5-large-document', clamd, { file: { mimeType: 'text/plain', originalName: 'large.txt', content: Buffer.alloc(11 * 1024 * 1024, 'lines of text\n') } });
  // Last: their mails are abandoned children, after which the Java test server no longer skips time.
  await record('v4-infected-mailed', clamd, infectedMailed);
  await record('v5-infected-mailed', clamd, infectedMailed);

  await writeHistories(env.client, 'fileScan', recorded);
});
