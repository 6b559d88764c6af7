// Records the committed histories of the re-scan (test/replay/histories/fileRescan/) and of its check
// (test/replay/histories/fileRescanCheck/) with the real activities (PostgreSQL, clamd, a bucket of
// its own, Mailpit), on the Temporal dev server: the Java test server ignores the last completion
// result the check reads, and the re-scan's mails are abandoned workflows. The generic
// `npm run record-history` cannot make files available or start a run as its Schedule does.
// Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-file-rescan-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does: a committed history
// must replay on any machine, without this machine's payload key.
import { randomUUID } from 'node:crypto';
import { encodeToPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { createFileRescanActivities } from '../../activities/files/rescan.activities';
import { createFileScanActivities } from '../../activities/files/scan.activities';
import { createNotifyActivities } from '../../activities/notify/mail.activities';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { createClamdScanner } from '../../services/files/scanner';
import { fileRescanWorkflowId, type FileRescanCheckInput, type FileRescanCheckResult, type FileRescanInput } from '../../workflows/files/rescan.messages';
import { makeAvailable } from '../helpers/files';
import { EICAR, fileRowOf, stageFile } from '../helpers/files-scan';
import { waitForMails } from '../helpers/mail';
import { uniqueTaskQueue } from '../helpers/temporal';
import { connectPlainDevServer, createRecordingWorker, recordFilesHistories, writeHistories } from './recording';

recordFilesHistories('record-file-rescan', connectPlainDevServer, async ({ temporal: server, owner, app, bucket, smtp, tenant }) => {
  const logger = createLogger('record', 'silent');
  const { client } = server;
  const namespace = client.options.namespace;
  const scanner = createClamdScanner(config().clamav);
  const taskQueue = uniqueTaskQueue('record-files-rescan');
  const worker = await createRecordingWorker(server, taskQueue, {
    ...createFileRescanActivities({ appPool: app, fleetPool: owner, objectStore: bucket, scanner, logger }),
    ...createFileScanActivities({ appPool: app, objectStore: bucket, scanner, logger }),
    ...createNotifyActivities({ smtp, logger }),
  });

  /** An available file whose stored content is `stored` (EICAR: detected by today's signatures). */
  async function available(originalName: string, stored: string) {
    const content = Buffer.from(stored);
    const file = await stageFile(owner, bucket, tenant.tenantId, { mimeType: 'text/plain', originalName, content, uploadedBy: tenant.member.id });
    await bucket.s3.removeObject(bucket.bucket, file.stagingKey);
    await makeAvailable(owner, bucket, { id: file.fileId, tenantId: file.tenantId, bucket: 'documents', mimeType: 'text/plain' }, content);
    return fileRowOf(owner, file);
  }

  const histories: Record<'fileRescan' | 'fileRescanCheck', Array<[name: string, workflowId: string, runId?: string]>> = {
    fileRescan: [], fileRescanCheck: [],
  };
  /** A clean file, one detected by today's signatures, another clean one: the window of their creation. */
  async function threeFiles() {
    const first = await available('readme.txt', 'clean words\n');
    await available('later-detected.txt', EICAR);
    const last = await available('notes.txt', 'more clean words\n');
    return { since: first.createdAt, until: new Date(Date.parse(last.createdAt) + 1).toISOString() };
  }

  await worker.runUntil(async () => {
    const rescan = async (name: string, settings: Pick<FileRescanInput, 'pageSize' | 'filesPerRun'>) => {
      const signatureVersion = `record-${newId()}`;
      const handle = await client.workflow.start('fileRescan', {
        taskQueue, workflowId: fileRescanWorkflowId(signatureVersion),
        args: [{ signatureVersion, window: await threeFiles(), perSecond: 20, notifyTaskQueue: taskQueue, ...settings } satisfies FileRescanInput],
      });
      await handle.result();
      histories.fileRescan.push([name, handle.workflowId, handle.firstExecutionRunId]);
    };
    // One file per run: the first run ends by continuing as new.
    await rescan('v1-continued-as-new', { pageSize: 1, filesPerRun: 1 });
    // Pages of two in one run: the detected file is rejected and the admins mailed.
    await rescan('v1-infected-mailed', { pageSize: 2, filesPerRun: 100 });

    const check = async (name: string, previous?: FileRescanCheckResult) => {
      const workflowId = `record.files.rescan-check.${newId()}`;
      const input: FileRescanCheckInput = { windowDays: 30, perSecond: 1000, notifyTaskQueue: taskQueue };
      await client.workflowService.startWorkflowExecution({
        namespace, workflowId, workflowType: { name: 'fileRescanCheck' }, taskQueue: { name: taskQueue },
        input: { payloads: await encodeToPayloads(client.options.loadedDataConverter, input) },
        ...(previous && { lastCompletionResult: { payloads: await encodeToPayloads(client.options.loadedDataConverter, previous) } }),
        identity: 'record-file-rescan', requestId: randomUUID(),
      });
      const result = await client.workflow.getHandle(workflowId).result() as FileRescanCheckResult;
      histories.fileRescanCheck.push([name, workflowId]);
      return result;
    };
    await check('v1-first-run');
    const changed = await check('v1-version-changed', { signatureVersion: 'older', previousSignatureVersion: null, rescanWorkflowId: null });
    // Its re-scan would walk the shared database's last 30 days: only its start was to be recorded.
    const started = client.workflow.getHandle(changed.rescanWorkflowId!);
    await started.terminate('only its start is recorded');
    await client.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId: started.workflowId } });
    // The re-scans' mail workflows run on this worker's queue: it serves them until the mails have arrived.
    await waitForMails(tenant.admin.email, 2);
  });

  await writeHistories(client, 'fileRescan', histories.fileRescan);
  await writeHistories(client, 'fileRescanCheck', histories.fileRescanCheck);
});
