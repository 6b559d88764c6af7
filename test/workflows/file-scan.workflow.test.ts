import type { ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { buffer } from 'node:stream/consumers';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import sharp from 'sharp';
import { createFileScanActivities } from '../../activities/files/scan.activities';
import { createNotifyActivities } from '../../activities/notify/mail.activities';
import { config } from '../../common/config';
import { createLogger } from '../../common/logger';
import { objectKeyOf, thumbnailKeyOf } from '../../services/files/object-keys';
import { FileScanStarter, fileScanSettingsOf } from '../../services/files/scan-client';
import { createClamdScanner } from '../../services/files/scanner';
import { fileScanWorkflowId, fileStagedSignal, type FileScanResult } from '../../workflows/files/files.messages';
import type { fileScan } from '../../workflows/files/scan.workflow';
import { storageUsageOf } from '../helpers/files';
import { EICAR, fileRowOf, samplePng, stageFile, type StagedFile } from '../helpers/files-scan';
import { useFilesWorkflowStack } from '../helpers/files-workflows';
import { waitFor } from '../helpers/http';
import { openedBeforeAll } from '../helpers/lifecycle';
import { mailsTo, waitForMails } from '../helpers/mail';
import { startWorkerProcess } from '../helpers/money-worker';
import { connectDevServer, createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';
import { auditRecordsOf, outboxOfType } from '../helpers/users';

/**
 * The scan workflow under the time-skipping server with the real activities: files staged in a
 * bucket of this test, scanned by the local clamd, rows and outbox in PostgreSQL, admin mails through
 * the sendEmail workflow to Mailpit. Files are staged as the upload route leaves them (helpers/files-scan).
 */
jest.setTimeout(120_000);

const HOUR = 3_600_000;
const logger = createLogger('file-scan-test', 'silent');

const stack = useFilesWorkflowStack('scan', createTimeSkippingEnv);

/** The files activities (with `clamav`, by default the local clamd) and the mail activity, as the platform's worker has them. */
function activities(clamav = config().clamav) {
  return {
    ...createFileScanActivities({ appPool: stack.app, objectStore: stack.bucket, scanner: createClamdScanner(clamav), logger }),
    ...createNotifyActivities({ smtp: stack.smtp, logger }),
  };
}

/** The gateway's starter, with the documented staging TTL and this test's queue for the mails. */
function starter(taskQueue: string, on = stack.temporal): FileScanStarter {
  return new FileScanStarter(on.client, taskQueue, { ...fileScanSettingsOf(config()), notifyTaskQueue: taskQueue });
}

const handleOf = (file: StagedFile, on = stack.temporal) => on.client.workflow.getHandle<typeof fileScan>(fileScanWorkflowId(file.fileId));

interface ScanOptions {
  staged?: boolean;
  /** Runs after the start, before the result is awaited. */
  whileRunning?: () => Promise<void>;
  on?: TestWorkflowEnvironment;
}

/** Starts the file's scan with a worker of its own and answers the workflow's result. */
async function scan(file: StagedFile, { staged, whileRunning, on = stack.temporal }: ScanOptions = {}): Promise<FileScanResult> {
  const taskQueue = uniqueTaskQueue('files-scan');
  const worker = await createTestWorker(on, { taskQueue, activities: activities() });
  return worker.runUntil(async () => {
    await starter(taskQueue, on).start({ tenantId: file.tenantId, fileId: file.fileId, sizeBytes: file.sizeBytes, staged });
    await whileRunning?.();
    // Waiting for the result is what lets the test server skip time.
    return handleOf(file, on).result();
  });
}

/**
 * A TCP relay to the local clamd on a port of its own that refuses every connection (nothing listens)
 * until up(): clamd unreachable, then back.
 */
async function clamdRelay(): Promise<{ port: number; up(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    const upstream = connect(config().clamav.port, config().clamav.host);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
  });
  // A free port, closed again until clamd is to be reachable.
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return {
    port,
    up: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (server.listening) server.close(() => resolve());
      else resolve();
    }),
  };
}

/** The event types of the file's scan workflow, without their EVENT_TYPE_ prefix. */
async function eventTypesOf(file: StagedFile): Promise<string[]> {
  const { events } = JSON.parse(historyToJSON(await handleOf(file).fetchHistory())) as { events: Array<{ eventType: string }> };
  return events.map((event) => event.eventType.replace('EVENT_TYPE_', ''));
}

const objectsOf = (file: StagedFile) => stack.bucket.keys(`${file.tenantId}/`).then((keys) => keys.filter((key) => key.includes(file.fileId)));

describe('fileScan workflow', () => {
  it('makes a clean PNG available at its final key with files.file.uploaded, an audit record and both thumbnails', async () => {
    const png = await samplePng(640, 480);
    const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, { mimeType: 'image/png', originalName: 'diagram.png', content: png, uploadedBy: stack.tenant.member.id });
    const storage = await storageUsageOf(stack.owner, stack.tenant.tenantId);

    const reads = jest.spyOn(stack.bucket.s3, 'getObject');
    expect(await scan(file)).toEqual({ status: 'available' });
    // Read from the store once, by the scan: the thumbnails are rendered from the bytes scanned.
    expect(reads.mock.calls.map(([, key]) => key)).toEqual([file.stagingKey]);
    reads.mockRestore();
    // Counted at upload; passing the scan changes nothing.
    expect(await storageUsageOf(stack.owner, stack.tenant.tenantId)).toBe(storage);

    const objectKey = objectKeyOf(file.tenantId, 'assets', file.fileId);
    const thumbnails = {
      icon_32: thumbnailKeyOf(file.tenantId, 'assets', file.fileId, 'icon_32'),
      card_300: thumbnailKeyOf(file.tenantId, 'assets', file.fileId, 'card_300'),
    };
    const row = await fileRowOf(stack.owner, file);
    expect(row).toMatchObject({ status: 'available', objectKey, thumbnails, rejectedReason: null, scannedAt: expect.any(String) });
    // The staged object is gone; the original and its two thumbnails are all there is.
    expect(await objectsOf(file)).toEqual([objectKey, thumbnails.card_300, thumbnails.icon_32].sort());
    expect((await buffer(await stack.bucket.s3.getObject(stack.bucket.bucket, objectKey))).equals(png)).toBe(true);
    const sizes = await Promise.all(Object.values(thumbnails).map(async (key) => {
      const { width, height, format } = await sharp(await buffer(await stack.bucket.s3.getObject(stack.bucket.bucket, key))).metadata();
      return { width, height, format };
    }));
    expect(sizes).toEqual([{ width: 32, height: 32, format: 'webp' }, { width: 300, height: 200, format: 'webp' }]);

    const events = await outboxOfType(stack.owner, file.tenantId, 'files.file.uploaded');
    expect(events.filter((event) => event.partitionKey === file.fileId)).toEqual([{
      type: 'files.file.uploaded', partitionKey: file.fileId,
      data: {
        file_id: file.fileId, tenant_id: file.tenantId, bucket: 'assets', original_name: 'diagram.png', mime_type: 'image/png',
        size_bytes: png.length, sha256: null, uploaded_by: stack.tenant.member.id, uploaded_at: row.createdAt, available_at: row.scannedAt,
      },
    }]);
    const audit = (await auditRecordsOf(stack.owner, file.tenantId, 'files.file.uploaded')).filter((record) => record.entityId === file.fileId);
    expect(audit).toEqual([expect.objectContaining({
      entityType: 'file', actorId: stack.tenant.member.id, before: null,
      after: expect.objectContaining({ id: file.fileId, status: 'available', objectKey, originalName: 'diagram.png' }),
    })]);

    // A file of at most 10 MB is scanned in a local activity: one workflow task, no activity task.
    expect(await eventTypesOf(file)).toEqual([
      'WORKFLOW_EXECUTION_STARTED', 'WORKFLOW_TASK_SCHEDULED', 'WORKFLOW_TASK_STARTED', 'WORKFLOW_TASK_COMPLETED',
      'MARKER_RECORDED', 'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES', 'MARKER_RECORDED', 'WORKFLOW_EXECUTION_COMPLETED',
    ]);

    // A second start (a retried upload request) runs nothing again.
    const { runId } = await handleOf(file).describe();
    await starter(uniqueTaskQueue('files-scan')).start({ tenantId: file.tenantId, fileId: file.fileId, sizeBytes: file.sizeBytes });
    expect((await handleOf(file).describe()).runId).toBe(runId);
  });

  it('rejects the EICAR file, removes its staged object and mails the tenant\'s owner and admin', async () => {
    const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, {
      mimeType: 'application/octet-stream', originalName: 'invoice.pdf.exe', content: Buffer.from(EICAR), uploadedBy: stack.tenant.member.id,
    });
    const storage = await storageUsageOf(stack.owner, stack.tenant.tenantId);

    // A test server of its own: the mails are abandoned child workflows that end after the scan, and
    // once one does, the Java test server keeps its clock locked for good, which would stop time
    // skipping in the tests after this one.
    const mailEnv = await createTimeSkippingEnv();
    let result: FileScanResult;
    try {
      result = await scan(file, {
        on: mailEnv,
        // The worker runs until the mail workflows have ended. One wait at a time: each unlocks and
        // locks the test server's clock, and those calls do not nest.
        whileRunning: async () => {
          await handleOf(file, mailEnv).result();
          for (const to of [stack.tenant.owner.email, stack.tenant.admin.email]) {
            await mailEnv.client.workflow.getHandle(`notify.email:files:${file.tenantId}:infected:${file.fileId}:${to}`).result();
          }
        },
      });
    } finally {
      await mailEnv.teardown();
    }

    expect(result).toEqual({ status: 'rejected', reason: expect.stringMatching(/^infected: Eicar-Test-Signature/) });
    expect(await fileRowOf(stack.owner, file)).toMatchObject({ status: 'rejected', rejectedReason: result.reason, objectKey: null, scannedAt: expect.any(String) });
    expect(await objectsOf(file)).toEqual([]);
    // The rejected file's bytes leave the plan's storage.
    expect(await storageUsageOf(stack.owner, stack.tenant.tenantId)).toBe(storage - EICAR.length);
    expect((await outboxOfType(stack.owner, file.tenantId, 'files.file.uploaded')).filter((event) => event.partitionKey === file.fileId)).toEqual([]);
    const audit = (await auditRecordsOf(stack.owner, file.tenantId, 'files.file.rejected')).filter((record) => record.entityId === file.fileId);
    expect(audit).toEqual([expect.objectContaining({
      actorId: stack.tenant.member.id, after: expect.objectContaining({ status: 'rejected' }),
      meta: { reason: result.reason, signatures: [expect.stringMatching(/^Eicar-Test-Signature/)] },
    })]);

    for (const admin of [stack.tenant.owner, stack.tenant.admin]) {
      const [mail, ...more] = await waitForMails(admin.email);
      expect(more).toEqual([]);
      expect(mail.subject).toBe('An uploaded file was rejected: malware found');
      expect(mail.text).toContain(`"invoice.pdf.exe" (${file.fileId})`);
      expect(mail.text).toMatch(/found: Eicar-Test-Signature/);
    }
    expect(await mailsTo(stack.tenant.member.email)).toEqual([]);
  });

  it('rejects a presigned upload whose PUT never came once 24 hours have passed', async () => {
    const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, { mimeType: 'application/pdf', originalName: 'never-sent.pdf' });
    const startedAt = await stack.temporal.currentTimeMs();

    expect(await scan(file, { staged: false })).toEqual({ status: 'rejected', reason: 'staging-expired' });

    expect(await stack.temporal.currentTimeMs() - startedAt).toBeGreaterThanOrEqual(24 * HOUR);
    expect(await fileRowOf(stack.owner, file)).toMatchObject({ status: 'rejected', rejectedReason: 'staging-expired', scannedAt: null });
    expect((await auditRecordsOf(stack.owner, file.tenantId, 'files.file.rejected')).filter((record) => record.entityId === file.fileId))
      .toEqual([expect.objectContaining({ meta: { reason: 'staging-expired' } })]);
    expect(await mailsTo(stack.tenant.admin.email).then((mails) => mails.filter((mail) => mail.text.includes(file.fileId)))).toEqual([]);
  });

  it('scans a presigned upload when fileStaged arrives within the staging TTL; a document gets no thumbnails', async () => {
    const content = Buffer.from('quarterly numbers\n');
    const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, { mimeType: 'text/plain', originalName: 'numbers.txt', sizeBytes: content.length });

    const result = await scan(file, {
      staged: false,
      whileRunning: async () => {
        await stack.temporal.sleep(23 * HOUR);
        await stack.bucket.s3.putObject(stack.bucket.bucket, file.stagingKey, content, content.length, { 'Content-Type': 'text/plain' });
        await handleOf(file).signal(fileStagedSignal);
      },
    });

    expect(result).toEqual({ status: 'available' });
    expect(await fileRowOf(stack.owner, file)).toMatchObject({ status: 'available', thumbnails: {} });
    expect(await objectsOf(file)).toEqual([objectKeyOf(file.tenantId, 'assets', file.fileId)]);
  });

  it('scans a document over 10 MB in an activity, whose heartbeats a long scan needs', async () => {
    const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, {
      mimeType: 'text/plain', originalName: 'large.txt', content: Buffer.alloc(10 * 1024 * 1024 + 1, 'lines of text\n'),
    });

    expect(await scan(file)).toEqual({ status: 'available' });
    const events = await eventTypesOf(file);
    expect(events.filter((type) => type.startsWith('ACTIVITY_TASK_'))).toEqual(['ACTIVITY_TASK_SCHEDULED', 'ACTIVITY_TASK_STARTED', 'ACTIVITY_TASK_COMPLETED']);
    expect(await objectsOf(file)).toEqual([objectKeyOf(file.tenantId, 'assets', file.fileId)]);
  });

  it('keeps an image sharp cannot read available, without thumbnails', async () => {
    const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, { mimeType: 'image/png', originalName: 'broken.png', content: Buffer.from('not a png at all') });

    expect(await scan(file)).toEqual({ status: 'available' });

    expect(await fileRowOf(stack.owner, file)).toMatchObject({ status: 'available', thumbnails: {} });
    expect(await objectsOf(file)).toEqual([objectKeyOf(file.tenantId, 'assets', file.fileId)]);
  });

  it('rejects an empty upload, on which clamd gives no verdict, instead of calling it clean', async () => {
    const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, { mimeType: 'text/plain', originalName: 'empty.txt', content: Buffer.alloc(0) });

    expect(await scan(file)).toEqual({ status: 'rejected', reason: 'empty-file' });
    expect(await objectsOf(file)).toEqual([]);
  });

  it('retries the scan while clamd is unreachable, never calling the file clean, and scans it once clamd is back', async () => {
    const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, { mimeType: 'text/plain', originalName: 'patience.txt', content: Buffer.from('wait for it\n') });
    const relay = await clamdRelay();
    const taskQueue = uniqueTaskQueue('files-scan');
    // A small file's scan is a local activity, which has no pending activity to describe: the attempts are counted here.
    const refused: string[] = [];
    const scanning = activities({ host: '127.0.0.1', port: relay.port });
    const counted = {
      ...scanning,
      async scanAndPromoteFile(ref: Parameters<typeof scanning.scanAndPromoteFile>[0]) {
        try {
          return await scanning.scanAndPromoteFile(ref);
        } catch (error) {
          refused.push((error as Error).message);
          throw error;
        }
      },
    };
    const worker = await createTestWorker(stack.temporal, { taskQueue, activities: counted });
    try {
      const result = await worker.runUntil(async () => {
        await starter(taskQueue).start({ tenantId: file.tenantId, fileId: file.fileId, sizeBytes: file.sizeBytes });
        await waitFor('two refused scans', async () => refused.length >= 2, 30_000, 100);
        expect(refused.every((message) => /ECONNREFUSED/.test(message))).toBe(true);
        expect(await fileRowOf(stack.owner, file)).toMatchObject({ status: 'pending_scan' });
        expect(await objectsOf(file)).toEqual([file.stagingKey]);

        await relay.up();
        return handleOf(file).result();
      });
      expect(result).toEqual({ status: 'available' });
    } finally {
      await relay.close();
    }
  });

  it('rejects a file clamd could not scan within the staging TTL as staging-expired', async () => {
    const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, { mimeType: 'text/plain', originalName: 'late.txt', content: Buffer.from('too late\n') });
    const relay = await clamdRelay();
    const taskQueue = uniqueTaskQueue('files-scan');
    const worker = await createTestWorker(stack.temporal, { taskQueue, activities: activities({ host: '127.0.0.1', port: relay.port }) });
    // A TTL of 10 minutes instead of 24 hours: the same rule, a dozen refused attempts instead of 1 500.
    const shortTtl = new FileScanStarter(stack.temporal.client, taskQueue, { stagingTtlMs: 10 * 60_000, notifyTaskQueue: taskQueue });
    try {
      const result = await worker.runUntil(async () => {
        await shortTtl.start({ tenantId: file.tenantId, fileId: file.fileId, sizeBytes: file.sizeBytes });
        return handleOf(file).result();
      });
      expect(result).toEqual({ status: 'rejected', reason: 'staging-expired' });
    } finally {
      await relay.close();
    }
    expect(await fileRowOf(stack.owner, file)).toMatchObject({ status: 'rejected', rejectedReason: 'staging-expired', scannedAt: null, objectKey: null });
    expect(await objectsOf(file)).toEqual([]);
  });

  /**
   * On the Temporal dev server, not the time-skipping one: the Java test server never moves a workflow
   * task off a dead worker's sticky queue (a real server does after its schedule-to-start timeout), so
   * no second worker would ever continue the workflow there. The lost attempts time out for real (30 s).
   */
  describe('a worker lost in the middle of the scan', () => {
    const server = openedBeforeAll(connectDevServer);

    /** Resolves when the child process logs `message` (a JSON log line). */
    function logged(child: ChildProcess, message: string): Promise<void> {
      return new Promise((resolve) => {
        let seen = '';
        const onData = (chunk: Buffer) => {
          seen += chunk.toString();
          if (!seen.includes(`"${message}"`)) return;
          child.stdout!.off('data', onData);
          resolve();
        };
        child.stdout!.on('data', onData);
      });
    }

    /**
     * Scans a PNG with a worker process that dies (SIGKILL) right after its one activity scanned and
     * promoted the file and rendered its thumbnails, before Temporal heard of it; a second worker
     * takes over once the lost attempt times out. The staged object is gone by then: the retry must
     * see the file is no longer pending instead of scanning it again (which would reject it).
     */
    it('ends in one final state with one event when the worker died after the scan\'s work, before reporting it', async () => {
      const file = await stageFile(stack.owner, stack.bucket, stack.tenant.tenantId, { mimeType: 'image/png', originalName: 'crash.png', content: await samplePng(400, 300) });
      const taskQueue = uniqueTaskQueue('files-crash');
      const first = await startWorkerProcess('test/helpers/files-worker-entry.ts', 'files worker running', [], {
        FILES_TASK_QUEUE: taskQueue, S3_BUCKET: stack.bucket.bucket, FILE_SCAN_CRASH_AFTER: 'scanAndPromoteFile',
      });
      try {
        const crashPoint = logged(first.child, 'file scan crash point');
        await new FileScanStarter(server.client, taskQueue, fileScanSettingsOf(config())).start({ tenantId: file.tenantId, fileId: file.fileId, sizeBytes: file.sizeBytes });
        await crashPoint;
        expect(await first.stop('SIGKILL')).toBe('SIGKILL');
      } finally {
        await first.stop('SIGKILL');
      }
      expect(await fileRowOf(stack.owner, file)).toMatchObject({ status: 'available' });
      const second = await createTestWorker(server, { taskQueue, activities: activities() });
      const handle = server.client.workflow.getHandle<typeof fileScan>(fileScanWorkflowId(file.fileId));
      expect(await second.runUntil(handle.result())).toEqual({ status: 'available' });

      expect(await fileRowOf(stack.owner, file)).toMatchObject({ status: 'available', thumbnails: { icon_32: expect.any(String), card_300: expect.any(String) } });
      expect(await objectsOf(file)).toHaveLength(3);
      expect((await outboxOfType(stack.owner, file.tenantId, 'files.file.uploaded')).filter((event) => event.partitionKey === file.fileId)).toHaveLength(1);
      expect((await auditRecordsOf(stack.owner, file.tenantId, 'files.file.uploaded')).filter((record) => record.entityId === file.fileId)).toHaveLength(1);
    });
  });
});
