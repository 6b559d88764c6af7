import { z } from 'zod';
import { createFileScanActivities } from '../../activities/files/scan.activities';
import { config } from '../../common/config';
import { createLogger } from '../../common/logger';
import { sql } from '../../db/pool';
import type { FilesDeps } from '../../services/files/deps';
import { presignUpload, type PresignRequest, type PresignedUpload } from '../../services/files/presign';
import { FileScanStarter, fileScanSettingsOf } from '../../services/files/scan-client';
import { createClamdScanner, type VirusScanner } from '../../services/files/scanner';
import { fileScanWorkflowId, fileStagedSignal, type FileScanResult } from '../../workflows/files/files.messages';
import type { fileScan } from '../../workflows/files/scan.workflow';
import { storageUsageOf } from '../helpers/files';
import { useFilesWorkflowStack } from '../helpers/files-workflows';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';

/**
 * A presigned upload's reservation (services/files/presign.ts) and its scan workflow under the
 * time-skipping server, with the real activities, PostgreSQL and a bucket of this test: the presign
 * service records the file and starts the workflow exactly as the route does, so what is reserved and
 * released is the real thing. A URL that expires unused rejects the file upload-expired and releases
 * its storage and its staging slot, unless its PUT landed without a notification; a staged object of
 * another size than declared is never scanned into use. The PUT noticed through the store's notifications is test/api/files/presign.test.ts's.
 */
jest.setTimeout(120_000);

const MINUTE = 60_000;
const logger = createLogger('file-presign-test', 'silent');

const stack = useFilesWorkflowStack('presign', createTimeSkippingEnv);

/** What the gateway's files routes get, starting the scans on `taskQueue` of the time-skipping server. */
function filesDeps(taskQueue: string): FilesDeps {
  const scans = new FileScanStarter(stack.temporal.client, taskQueue, { ...fileScanSettingsOf(config()), notifyTaskQueue: taskQueue });
  return {
    db: stack.app, objectStore: stack.bucket, scans: () => scans, trashes: () => undefined, settings: config().files, enforcePlanLimits: true, logger,
  };
}

const auth = () => ({ tenantId: stack.tenant.tenantId, userId: stack.tenant.member.id, email: stack.tenant.member.email, roles: ['member'] });

const row = (fileId: string) => stack.owner.one(sql.type(z.object({ status: z.string(), rejectedReason: z.string().nullable() }))`
  SELECT status, rejected_reason AS "rejectedReason" FROM files WHERE id = ${fileId}
`);

const stagedCount = () => stack.owner.oneFirst(sql.type(z.object({ count: z.number() }))`
  SELECT count(*) AS count FROM files WHERE tenant_id = ${stack.tenant.tenantId} AND status = 'pending_scan'
`);

/**
 * Presigns `request` through the service with a worker of its own queue, runs `meanwhile`, and answers
 * the scan's result. `afterScan` runs once clamd has given its verdict, before the scan goes on with it.
 */
async function presigned(
  request: PresignRequest, meanwhile?: (upload: PresignedUpload) => Promise<void>, afterScan?: (upload: PresignedUpload) => Promise<void>,
): Promise<{ upload: PresignedUpload; result: FileScanResult }> {
  const taskQueue = uniqueTaskQueue('files-presign');
  const clamd = createClamdScanner(config().clamav);
  let upload: PresignedUpload | undefined;
  const scanner: VirusScanner = {
    version: () => clamd.version(),
    async scan(stream) {
      const verdict = await clamd.scan(stream);
      if (afterScan && upload) await afterScan(upload);
      return verdict;
    },
  };
  const activities = createFileScanActivities({ appPool: stack.app, objectStore: stack.bucket, scanner, logger });
  const worker = await createTestWorker(stack.temporal, { taskQueue, activities });
  return worker.runUntil(async () => {
    upload = await presignUpload(filesDeps(taskQueue), auth(), request);
    await meanwhile?.(upload);
    // Waiting for the result is what lets the test server skip time.
    const result = await stack.temporal.client.workflow.getHandle<typeof fileScan>(fileScanWorkflowId(upload.fileId)).result();
    return { upload, result };
  });
}

const putTo = (upload: PresignedUpload, body: Buffer) =>
  fetch(upload.uploadUrl, { method: 'PUT', body, headers: { 'content-type': upload.fields['Content-Type'] } });

describe('a presigned upload', () => {
  it('whose URL expires unused is rejected upload-expired, releasing its storage and its staging slot', async () => {
    const storage = await storageUsageOf(stack.owner, stack.tenant.tenantId);
    const staged = await stagedCount();
    let reserved: { storage: number; staged: number } | undefined;

    const { upload, result } = await presigned(
      { bucket: 'documents', originalName: 'never-sent.pdf', mimeType: 'application/pdf', sizeBytes: 4096 },
      async () => {
        reserved = { storage: await storageUsageOf(stack.owner, stack.tenant.tenantId), staged: await stagedCount() };
      },
    );

    expect(reserved).toEqual({ storage: storage + 4096, staged: staged + 1 });
    expect(result).toEqual({ status: 'rejected', reason: 'upload-expired' });
    expect(await row(upload.fileId)).toEqual({ status: 'rejected', rejectedReason: 'upload-expired' });
    expect(await storageUsageOf(stack.owner, stack.tenant.tenantId)).toBe(storage);
    expect(await stagedCount()).toBe(staged);
  });

  it('waits for its PUT the URL\'s TTL and a grace, not the 24-hour staging TTL', async () => {
    const { upload } = await presigned({ bucket: 'documents', originalName: 'late.pdf', mimeType: 'application/pdf', sizeBytes: 10 });
    const history = await stack.temporal.client.workflow.getHandle(fileScanWorkflowId(upload.fileId)).fetchHistory();
    const timer = history.events?.find((event) => event.timerStartedEventAttributes)?.timerStartedEventAttributes;
    const seconds = Number(timer?.startToFireTimeout?.seconds ?? 0);
    expect(seconds * 1000).toBeGreaterThanOrEqual(15 * MINUTE);
    expect(seconds * 1000).toBeLessThanOrEqual(30 * MINUTE);
  });

  it('whose PUT is noticed is scanned and made available, its reservation kept as its storage', async () => {
    const content = Buffer.from('minutes of the meeting\n');
    const storage = await storageUsageOf(stack.owner, stack.tenant.tenantId);
    const { result } = await presigned(
      { bucket: 'documents', originalName: 'minutes.txt', mimeType: 'text/plain', sizeBytes: content.length },
      async (upload) => {
        await stack.temporal.sleep(10 * MINUTE);
        expect((await putTo(upload, content)).status).toBe(200);
        await stack.temporal.client.workflow.getHandle(fileScanWorkflowId(upload.fileId)).signal(fileStagedSignal);
      },
    );
    expect(result).toEqual({ status: 'available' });
    expect(await storageUsageOf(stack.owner, stack.tenant.tenantId)).toBe(storage + content.length);
  });

  it('whose PUT landed unnoticed (the store\'s notification lost) is found by the last look and made available', async () => {
    const content = Buffer.from('sent while Kafka was down\n');
    const { upload, result } = await presigned(
      { bucket: 'documents', originalName: 'unnoticed.txt', mimeType: 'text/plain', sizeBytes: content.length },
      async (presignedUpload) => {
        expect((await putTo(presignedUpload, content)).status).toBe(200);
      },
    );
    expect(result).toEqual({ status: 'available' });
    expect(await row(upload.fileId)).toEqual({ status: 'available', rejectedReason: null });
  });

  it('whose staged object has another size than declared is rejected size-mismatch, releasing its storage', async () => {
    const storage = await storageUsageOf(stack.owner, stack.tenant.tenantId);
    const { upload, result } = await presigned(
      { bucket: 'documents', originalName: 'short.txt', mimeType: 'text/plain', sizeBytes: 100 },
      async ({ fields, fileId }) => {
        // Written past the URL (its signature would refuse it): a store that did not enforce the length.
        await stack.bucket.s3.putObject(stack.bucket.bucket, fields.key, Buffer.from('short\n'), 6, { 'Content-Type': 'text/plain' });
        await stack.temporal.client.workflow.getHandle(fileScanWorkflowId(fileId)).signal(fileStagedSignal);
      },
    );
    expect(result).toEqual({ status: 'rejected', reason: 'size-mismatch' });
    expect(await row(upload.fileId)).toEqual({ status: 'rejected', rejectedReason: 'size-mismatch' });
    expect(await storageUsageOf(stack.owner, stack.tenant.tenantId)).toBe(storage);
    expect(await stack.bucket.keys(`${stack.tenant.tenantId}/`).then((keys) => keys.filter((key) => key.includes(upload.fileId)))).toEqual([]);
  });

  it('whose URL is PUT again with other bytes between the scan and the copy is rejected, never promoting unscanned bytes', async () => {
    const clean = Buffer.from('a clean document\n');
    const other = Buffer.from('other bytes, same');
    expect(other.length).toBe(clean.length);
    const storage = await storageUsageOf(stack.owner, stack.tenant.tenantId);
    const { upload, result } = await presigned(
      { bucket: 'documents', originalName: 'swapped.txt', mimeType: 'text/plain', sizeBytes: clean.length },
      async (presignedUpload) => {
        expect((await putTo(presignedUpload, clean)).status).toBe(200);
        await stack.temporal.client.workflow.getHandle(fileScanWorkflowId(presignedUpload.fileId)).signal(fileStagedSignal);
      },
      // The same URL, still valid: the store takes a second PUT of the declared length and type.
      async (presignedUpload) => {
        expect((await putTo(presignedUpload, other)).status).toBe(200);
      },
    );
    expect(result).toEqual({ status: 'rejected', reason: 'staged-object-changed' });
    expect(await row(upload.fileId)).toEqual({ status: 'rejected', rejectedReason: 'staged-object-changed' });
    expect(await storageUsageOf(stack.owner, stack.tenant.tenantId)).toBe(storage);
    expect(await stack.bucket.keys(`${stack.tenant.tenantId}/`).then((keys) => keys.filter((key) => key.includes(upload.fileId)))).toEqual([]);
  });
});
