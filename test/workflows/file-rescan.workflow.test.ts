import { randomUUID } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex, encodeToPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { createFileRescanActivities } from '../../activities/files/rescan.activities';
import { createFileScanActivities } from '../../activities/files/scan.activities';
import { createNotifyActivities } from '../../activities/notify/mail.activities';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { objectKeyOf } from '../../services/files/object-keys';
import { clamdSignatureVersion } from '../../services/files/rescan';
import { BACKLOG_SCAN_PRIORITY, FileScanStarter, fileScanSettingsOf } from '../../services/files/scan-client';
import { createClamdScanner } from '../../services/files/scanner';
import { fileScanWorkflowId } from '../../workflows/files/files.messages';
import {
  fileRescanWorkflowId, type FileRescanCheckInput, type FileRescanCheckResult, type FileRescanInput, type FileRescanResult,
} from '../../workflows/files/rescan.messages';
import type { fileRescan, fileRescanCheck } from '../../workflows/files/rescan.workflow';
import { ensureSchedule, fileRescanCheckSchedule } from '../../workers/schedules';
import { makeAvailable, storageUsageOf } from '../helpers/files';
import { EICAR, fileRowOf, samplePng, stageFile, type StagedFile } from '../helpers/files-scan';
import { useFilesWorkflowStack } from '../helpers/files-workflows';
import { waitFor } from '../helpers/http';
import { mailsTo, waitForMails } from '../helpers/mail';
import { connectDevServer, createTestWorker, uniqueTaskQueue } from '../helpers/temporal';
import { auditRecordsOf } from '../helpers/users';

/**
 * The retroactive re-scan and the scan priority with the real components: files made available in a
 * bucket of this test, re-scanned by the local clamd, rows, usage and outbox in PostgreSQL, the
 * admins' mails through the sendEmail workflow to Mailpit. Everything runs on the Temporal dev
 * server: the re-scan has no timers and its abandoned mail workflows would lock the time-skipping
 * server's clock; the Java test server has no Schedules, ignores a start's last completion result
 * and keeps no priorities.
 */
jest.setTimeout(120_000);

const logger = createLogger('file-rescan-test', 'silent');

const stack = useFilesWorkflowStack('rescan', connectDevServer);

/** The files activities the re-scan uses (the local clamd), and the mail activity, as the platform's worker has them. */
function activities() {
  const scanner = createClamdScanner(config().clamav);
  return {
    ...createFileRescanActivities({ appPool: stack.app, fleetPool: stack.owner, objectStore: stack.bucket, scanner, logger }),
    ...createFileScanActivities({ appPool: stack.app, objectStore: stack.bucket, scanner, logger }),
    ...createNotifyActivities({ smtp: stack.smtp, logger }),
  };
}

/** An available file with its original (and a thumbnail for an image) in the store, counted in storage_bytes. */
async function availableFile(content: Buffer, mimeType: string, originalName: string): Promise<StagedFile> {
  const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, { mimeType, originalName, content, uploadedBy: stack.tenant.member.id });
  await stack.bucket.s3.removeObject(stack.bucket.bucket, file.stagingKey);
  const thumbnails: Record<string, Buffer> = mimeType.startsWith('image/') ? { icon_32: content } : {};
  await makeAvailable(stack.owner, stack.bucket, { id: file.fileId, tenantId: file.tenantId, bucket: 'assets', mimeType }, content, thumbnails);
  return file;
}

const objectsOf = (file: StagedFile) => stack.bucket.keys(`${file.tenantId}/`).then((keys) => keys.filter((key) => key.includes(file.fileId)));

describe('fileRescan workflow', () => {
  it('rejects a stored file the signatures now detect, mails the admins, and leaves a clean file available', async () => {
    const clean = await availableFile(Buffer.from('minutes of the meeting\n'), 'text/plain', 'minutes.txt');
    const png = await samplePng(64, 64);
    const detected = await availableFile(png, 'image/png', 'holiday.png');
    // Stored clean, found infected today: what a signature update does to a file, played by its content.
    const objectKey = objectKeyOf(detected.tenantId, 'assets', detected.fileId);
    await stack.bucket.s3.putObject(stack.bucket.bucket, objectKey, Buffer.from(EICAR), EICAR.length, { 'Content-Type': 'image/png' });
    const [first, last] = [await fileRowOf(stack.owner, clean), await fileRowOf(stack.owner, detected)];
    const storage = await storageUsageOf(stack.owner, stack.tenant.tenantId);

    const taskQueue = uniqueTaskQueue('files-rescan');
    const signatureVersion = `test-${newId()}`;
    // Only the files of this test's moments; other tests' files in that window are not in this bucket (skipped).
    const input: FileRescanInput = {
      signatureVersion,
      window: { since: first.createdAt, until: new Date(Date.parse(last.createdAt) + 1).toISOString() },
      perSecond: 50, pageSize: 1, filesPerRun: 1, notifyTaskQueue: taskQueue,
    };
    const worker = await createTestWorker(stack.temporal, { taskQueue, activities: activities() });
    const { result, firstRunId, runId } = await worker.runUntil(async () => {
      const handle = await stack.temporal.client.workflow.start<typeof fileRescan>('fileRescan', {
        taskQueue, workflowId: fileRescanWorkflowId(signatureVersion), args: [input],
      });
      const outcome: FileRescanResult = await handle.result();
      // The mails are workflows of their own: the worker serves them until they have arrived.
      await Promise.all([stack.tenant.owner.email, stack.tenant.admin.email].map((to) => waitForMails(to)));
      return { result: outcome, firstRunId: handle.firstExecutionRunId, runId: (await handle.describe()).runId };
    });

    expect(result).toEqual({ signatureVersion, scanned: 2, skipped: expect.any(Number), rejected: 1 });
    // One file per run: the history of a long re-scan stays small.
    expect(runId).not.toBe(firstRunId);

    const row = await fileRowOf(stack.owner, detected);
    expect(row).toMatchObject({ status: 'rejected', rejectedReason: expect.stringMatching(/^infected: Eicar-Test-Signature/) });
    expect(await objectsOf(detected)).toEqual([]);
    expect(await storageUsageOf(stack.owner, stack.tenant.tenantId)).toBe(storage - png.length);
    const audit = (await auditRecordsOf(stack.owner, stack.tenant.tenantId, 'files.file.rejected')).filter((record) => record.entityId === detected.fileId);
    expect(audit).toEqual([expect.objectContaining({
      actorId: null, after: expect.objectContaining({ status: 'rejected' }),
      meta: { reason: row.rejectedReason, signatures: [expect.stringMatching(/^Eicar-Test-Signature/)], signatureVersion, rescan: true },
    })]);

    expect(await fileRowOf(stack.owner, clean)).toMatchObject({ status: 'available', rejectedReason: null });
    const cleanKey = objectKeyOf(clean.tenantId, 'assets', clean.fileId);
    expect(await objectsOf(clean)).toEqual([cleanKey]);
    expect((await buffer(await stack.bucket.s3.getObject(stack.bucket.bucket, cleanKey))).toString()).toBe('minutes of the meeting\n');

    for (const admin of [stack.tenant.owner, stack.tenant.admin]) {
      const [mail, ...more] = await mailsTo(admin.email);
      expect(more).toEqual([]);
      expect(mail.subject).toBe('A stored file was rejected: malware found by a new scan');
      expect(mail.text).toContain(`"holiday.png" (${detected.fileId})`);
      expect(mail.text).toMatch(/found: Eicar-Test-Signature/);
    }
    expect(await mailsTo(stack.tenant.member.email)).toEqual([]);
  });
});

describe('fileRescanCheck workflow', () => {
  const checkInput = (taskQueue: string): FileRescanCheckInput => ({ windowDays: 30, perSecond: 1000, notifyTaskQueue: taskQueue });

  it('records clamd\'s version on the Schedule\'s first run, and compares the next run with it, also after an update of the Schedule', async () => {
    const current = await clamdSignatureVersion({ scanner: createClamdScanner(config().clamav) });
    const taskQueue = uniqueTaskQueue('files-rescan-check');
    const scheduleId = `test.files.rescan-check.${newId()}`;
    const options = fileRescanCheckSchedule({ cfg: config(), scheduleId, taskQueue });
    // Paused: only the test's triggers run it.
    await stack.temporal.client.schedule.create({ ...options, state: { paused: true } });
    const schedule = stack.temporal.client.schedule.getHandle(scheduleId);
    const worker = await createTestWorker(stack.temporal, { taskQueue, activities: activities() });
    try {
      const results = await worker.runUntil(async () => {
        const run = async (count: number): Promise<FileRescanCheckResult> => {
          // The Schedule's own overlap policy: a run started as ALLOW_ALL (trigger's default) is not
          // watched by the Schedule, so its result would not reach the next run.
          await schedule.trigger(ScheduleOverlapPolicy.SKIP);
          let workflowId = '';
          await waitFor(`run ${count} of the check`, async () => {
            const actions = (await schedule.describe()).info.recentActions;
            workflowId = actions.length >= count ? actions[count - 1].action.workflow.workflowId : '';
            return workflowId !== '';
          }, 30_000, 200);
          const result = await stack.temporal.client.workflow.getHandle<typeof fileRescanCheck>(workflowId).result();
          // Until the Schedule has seen the run end, a trigger under SKIP would be skipped.
          await waitFor('the Schedule to see the run end', async () => (await schedule.describe()).info.runningActions.length === 0, 30_000, 200);
          return result;
        };
        const firstRun = await run(1);
        // workers/main.ts ensures every Schedule at each start: an update must keep what the last run found.
        expect(await ensureSchedule(stack.temporal.client, options)).toBe('updated');
        return [firstRun, await run(2)];
      });
      expect(results).toEqual([
        { signatureVersion: current, previousSignatureVersion: null, rescanWorkflowId: null },
        { signatureVersion: current, previousSignatureVersion: current, rescanWorkflowId: null },
      ]);
    } finally {
      await schedule.delete();
    }
  });

  it('starts the re-scan of a new version over the last 30 days, one per version, at the lowest priority', async () => {
    const current = await clamdSignatureVersion({ scanner: createClamdScanner(config().clamav) });
    const taskQueue = uniqueTaskQueue('files-rescan-check');
    const worker = await createTestWorker(stack.temporal, { taskQueue, activities: activities() });
    const rescan = stack.temporal.client.workflow.getHandle<typeof fileRescan>(fileRescanWorkflowId(current));
    const check = async (previous: FileRescanCheckResult): Promise<FileRescanCheckResult> => {
      const workflowId = `test.files.rescan-check.${newId()}`;
      await startAsScheduled(stack.temporal.client, taskQueue, workflowId, checkInput(taskQueue), previous);
      return stack.temporal.client.workflow.getHandle<typeof fileRescanCheck>(workflowId).result();
    };
    const previous = { signatureVersion: 'older', previousSignatureVersion: null, rescanWorkflowId: null };
    try {
      const { first, again, info, starts } = await worker.runUntil(async () => {
        const [one, two] = [await check(previous), await check(previous)];
        const description = await rescan.describe();
        const history = await rescan.fetchHistory();
        // Only its start is this test's subject; it would re-scan the last 30 days of the shared database.
        await rescan.terminate('only its start is tested');
        return {
          first: one, again: two, info: description.raw.workflowExecutionInfo,
          starts: history.events?.filter((event) => event.workflowExecutionStartedEventAttributes) ?? [],
        };
      });

      expect(first).toEqual({ signatureVersion: current, previousSignatureVersion: 'older', rescanWorkflowId: rescan.workflowId });
      // A second check that still sees the change finds the re-scan started: one per version.
      expect(again).toEqual(first);
      expect(info?.priority?.priorityKey).toBe(5);
      expect(starts).toHaveLength(1);
      const input = await decodeFromPayloadsAtIndex<FileRescanInput>(
        stack.temporal.client.options.loadedDataConverter, 0, starts[0].workflowExecutionStartedEventAttributes?.input?.payloads,
      );
      const { since, until } = input.window;
      expect(Date.parse(until) - Date.parse(since)).toBe(30 * 86_400_000);
      expect(input).toMatchObject({ signatureVersion: current, perSecond: 1000, notifyTaskQueue: taskQueue });
    } finally {
      // The dev server is shared: the re-scan of the real version must not stay there as already started.
      await stack.temporal.client.workflowService.deleteWorkflowExecution({
        namespace: stack.temporal.client.options.namespace, workflowExecution: { workflowId: rescan.workflowId },
      }).catch(() => undefined);
    }
  });
});

/**
 * Starts the check as its Schedule does, with the previous run's result as the last completion
 * result (StartWorkflowExecution's own field, which the SDK's start options do not expose).
 */
async function startAsScheduled(
  client: Client, taskQueue: string, workflowId: string, input: FileRescanCheckInput, previous: FileRescanCheckResult,
): Promise<void> {
  const converter = client.options.loadedDataConverter;
  await client.workflowService.startWorkflowExecution({
    namespace: client.options.namespace,
    workflowId,
    workflowType: { name: 'fileRescanCheck' },
    taskQueue: { name: taskQueue },
    input: { payloads: await encodeToPayloads(converter, input) },
    lastCompletionResult: { payloads: await encodeToPayloads(converter, previous) },
    identity: 'file-rescan-test',
    requestId: randomUUID(),
  });
}

describe('scan priority', () => {
  it('starts a scan ahead of the backlog once more than the threshold wait, and at the default priority below it', async () => {
    // A queue no worker polls: every scan started there waits.
    const taskQueue = uniqueTaskQueue('files-scan-priority');
    const settings = fileScanSettingsOf(config());
    const plain = new FileScanStarter(stack.temporal.client, taskQueue, settings);
    const fileIds = [newId(), newId(), newId()];
    const started: string[] = [];
    try {
      const belowThreshold = new FileScanStarter(stack.temporal.client, taskQueue, settings, 3);
      await belowThreshold.start({ tenantId: stack.tenant.tenantId, fileId: fileIds[0], sizeBytes: 1 });
      started.push(fileIds[0]);
      for (const fileId of fileIds.slice(1)) {
        await plain.start({ tenantId: stack.tenant.tenantId, fileId, sizeBytes: 1 });
        started.push(fileId);
      }
      const backlog = async () => {
        const counts = await Promise.all([1, 2].map(async (taskQueueType) => Number((await stack.temporal.client.workflowService.describeTaskQueue({
          namespace: stack.temporal.client.options.namespace, taskQueue: { name: taskQueue }, taskQueueType, reportStats: true,
        })).stats?.approximateBacklogCount ?? 0)));
        return counts[0] + counts[1];
      };
      await waitFor('three scans waiting', async () => await backlog() >= 3, 30_000, 200);

      // A starter of another client: its first reading of the backlog is now, not cached from before.
      const other = await connectDevServer();
      try {
        const fileId = newId();
        await new FileScanStarter(other.client, taskQueue, settings, 2).start({ tenantId: stack.tenant.tenantId, fileId, sizeBytes: 1 });
        started.push(fileId);
        const priorityOf = async (id: string) => (await stack.temporal.client.workflow.getHandle(fileScanWorkflowId(id)).describe())
          .raw.workflowExecutionInfo?.priority?.priorityKey ?? 0;
        expect(await priorityOf(fileId)).toBe(BACKLOG_SCAN_PRIORITY.priorityKey);
        // Started while nothing waited (threshold 3), and without a threshold: the default (0 = unset, 3).
        expect(await Promise.all(fileIds.map(priorityOf))).toEqual([0, 0, 0]);
      } finally {
        await other.close();
      }
    } finally {
      await Promise.all(started.map((id) => stack.temporal.client.workflow.getHandle(fileScanWorkflowId(id)).terminate('priority test')));
    }
  });
});
