import { randomBytes } from 'node:crypto';
import type { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { createFileScanActivities } from '../../../activities/files/scan.activities';
import { config } from '../../../common/config';
import { newId } from '../../../common/ids';
import { createKafka } from '../../../common/kafka';
import { createLogger } from '../../../common/logger';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { presignedStagingKeyOf, receivedStagingKeyOf } from '../../../services/files/object-keys';
import { createClamdScanner } from '../../../services/files/scanner';
import { StagedObjectConsumer, stagedFilesOfNotification } from '../../../services/files/staged-objects';
import { fileScanWorkflowId } from '../../../workflows/files/files.messages';
import { appUrl } from '../../helpers/db';
import {
  MB, read, setStorageUsage, stagedKeysOf, storageLimitOf, storageUsageOf, upload, uploadParts,
  type FileObject, type Problem,
} from '../../helpers/files';
import { expectProblem as problemOf, useFilesApiStack, useFilesGateway } from '../../helpers/files-api';
import { samplePng } from '../../helpers/files-scan';
import { call, waitFor, type JsonResponse } from '../../helpers/http';
import { registerAccount } from '../../helpers/identity';
import { addMember, send } from '../../helpers/rbac';
import { connectDevServer, createTestWorker, type DevServer } from '../../helpers/temporal';

/**
 * POST /files/presign (docs/reference/files.md#rule-8; issue 17) through the real gateway, PostgreSQL and object
 * store (Versity): the URL the gateway signs is PUT to with fetch, and the store itself refuses a PUT
 * of another length or type. The scans the gateway starts go to a task queue no worker polls, except
 * in the last block, where a worker on the real Temporal dev server polls it and the staged object
 * consumer listens to the store's notifications (S3_EVENT_KAFKA_TOPIC): presign → PUT → available with
 * no further call of the client. The expiry of an unused URL is test/workflows/file-presign.workflow.test.ts's.
 */
jest.setTimeout(120_000);

const stack = useFilesApiStack('files-presign-test');

interface PresignedUpload {
  uploadUrl: string;
  fileId: string;
  expiresAt: string;
  fields: { 'Content-Type': string; key: string };
}

interface PresignBody {
  bucket: string;
  originalName: string;
  mimeType: string;
  sizeBytes: number;
}

const expectProblem = (response: { status: number; body: unknown }, status: number, type: string): Problem => problemOf(stack.gateway, response, status, type);

const presign = <T = PresignedUpload>(body: Partial<PresignBody> | Record<string, unknown>, token = stack.account.accessToken): Promise<JsonResponse<T>> =>
  send<T>(stack.gateway, 'POST', '/files/presign', token, body);

const document = (sizeBytes: number): PresignBody => ({ bucket: 'documents', originalName: 'report.pdf', mimeType: 'application/pdf', sizeBytes });

/** A PUT of `body` to a presigned URL, as a client sends it (fetch sets Content-Length from the body). */
const put = (url: string, body: Buffer, contentType: string) => fetch(url, { method: 'PUT', body, headers: { 'content-type': contentType } });

const fileRow = z.object({ status: z.string(), sizeBytes: z.number(), stagingKey: z.string(), rejectedReason: z.string().nullable(), mimeType: z.string() });

const rowOf = (id: string) => stack.owner.one(sql.type(fileRow)`
  SELECT status, size_bytes AS "sizeBytes", staging_key AS "stagingKey", rejected_reason AS "rejectedReason", mime_type AS "mimeType"
  FROM files WHERE id = ${id}
`);

const stagedSize = (key: string) => stack.store.s3.statObject(stack.store.bucket, key).then((stat) => stat.size, () => null);

describe('POST /files/presign', () => {
  it('answers 200 with a PUT URL valid 15 minutes, and reserves the declared size and a staging slot at once', async () => {
    const before = await storageUsageOf(stack.owner, stack.account.tenant.id);
    const requestedAt = Date.now();
    const response = await presign(document(2048));
    const answeredAt = Date.now();

    expect(response.status).toBe(200);
    const { uploadUrl, fileId, expiresAt, fields } = response.body;
    expect(fields).toEqual({ 'Content-Type': 'application/pdf', key: presignedStagingKeyOf(stack.account.tenant.id, fileId) });
    const url = new URL(uploadUrl);
    expect(`${url.hostname}:${url.port}`).toBe(`${stack.gateway.config.s3.endPoint}:${stack.gateway.config.s3.port}`);
    expect(url.pathname).toBe(`/${stack.store.bucket}/${fields.key}`);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-type;host');
    // 15 minutes from a moment while the request ran.
    expect(Date.parse(expiresAt)).toBeGreaterThanOrEqual(requestedAt + 900_000);
    expect(Date.parse(expiresAt)).toBeLessThanOrEqual(answeredAt + 900_000);
    expect(response.headers.get('cache-control')).toBe('no-store');

    // Recorded as an upload is: pending_scan, the declared size counted as storage, nothing staged yet.
    expect(await rowOf(fileId)).toEqual({
      status: 'pending_scan', sizeBytes: 2048, stagingKey: fields.key, rejectedReason: null, mimeType: 'application/pdf',
    });
    expect(await storageUsageOf(stack.owner, stack.account.tenant.id)).toBe(before + 2048);
    expect(await stagedSize(fields.key)).toBeNull();
    // Not readable before its scan, to its tenant or another.
    expectProblem(await read(stack.gateway, `/files/${fileId}`, stack.account.accessToken), 404, 'file-not-found');
    expectProblem(await read(stack.gateway, `/files/${fileId}?meta=1`, stack.stranger.accessToken), 404, 'file-not-found');
  });

  it('binds the PUT to the declared length and type: the store refuses another, and takes exactly the declared one', async () => {
    const bytes = randomBytes(1000);
    const { body: { uploadUrl, fields } } = await presign(document(bytes.length));

    const longer = await put(uploadUrl, Buffer.concat([bytes, Buffer.from('x')]), 'application/pdf');
    expect(longer.status).toBe(403);
    expect(await longer.text()).toContain('SignatureDoesNotMatch');
    expect((await put(uploadUrl, bytes.subarray(1), 'application/pdf')).status).toBe(403);
    expect((await put(uploadUrl, bytes, 'text/html')).status).toBe(403);
    // Without a Content-Length (a chunked body), the signed length cannot match either.
    const chunked = await fetch(uploadUrl, {
      method: 'PUT', headers: { 'content-type': 'application/pdf' }, duplex: 'half',
      body: new ReadableStream({ start(controller) { controller.enqueue(bytes); controller.close(); } }),
    });
    expect(chunked.status).toBe(403);
    expect(await stagedSize(fields.key)).toBeNull();

    expect((await put(uploadUrl, bytes, fields['Content-Type'])).status).toBe(200);
    expect(await stagedSize(fields.key)).toBe(bytes.length);
  });

  it('refuses a declared size over the type\'s limit with 413, and reserves nothing', async () => {
    const before = await storageUsageOf(stack.owner, stack.account.tenant.id);
    const image = expectProblem(await presign({ bucket: 'avatars', originalName: 'me.png', mimeType: 'image/png', sizeBytes: 10 * MB + 1 }), 413, 'payload-too-large');
    expect(image).toMatchObject({ limitBytes: 10 * MB });
    expectProblem(await presign(document(50 * MB + 1)), 413, 'payload-too-large');
    // At the limit is fine.
    expect((await presign({ bucket: 'avatars', originalName: 'me.png', mimeType: 'image/png', sizeBytes: 10 * MB })).status).toBe(200);
    expect(await storageUsageOf(stack.owner, stack.account.tenant.id)).toBe(before + 10 * MB);
  });

  it('refuses another bucket with 400 bucket-invalid, and a missing or empty field with 400 validation-error', async () => {
    expectProblem(await presign({ ...document(10), bucket: 'secrets' }), 400, 'bucket-invalid');
    expectProblem(await presign({ ...document(10), sizeBytes: 0 }), 400, 'validation-error');
    expectProblem(await presign({ ...document(10), sizeBytes: 1.5 }), 400, 'validation-error');
    expectProblem(await presign({ ...document(10), mimeType: 'pdf' }), 400, 'validation-error');
    const { mimeType: _omitted, ...withoutType } = document(10);
    expectProblem(await presign(withoutType), 400, 'validation-error');
  });

  it('needs a token, and files.write', async () => {
    expect((await presign(document(10), '')).status).toBe(401);
    const role = `file-reader-${newId()}`;
    await stack.owner.query(sql.unsafe`INSERT INTO roles (id, tenant_id, name, permissions) VALUES (${newId()}, ${stack.account.tenant.id}, ${role}, '{files.read}')`);
    const reader = await addMember(stack.gateway, stack.owner, stack.account.tenant.id, role);
    expectProblem(await presign(document(10), reader.token), 403, 'forbidden');
  });

  it('refuses a declared size that would pass the plan\'s storage_bytes with 402, reserving nothing', async () => {
    const tenant = stack.stranger.tenant.id;
    const limit = await storageLimitOf(stack.owner, tenant);
    await setStorageUsage(stack.owner, tenant, limit - 100);
    const over = expectProblem(await presign(document(101), stack.stranger.accessToken), 402, 'plan-limit-exceeded');
    expect(over.limit).toMatchObject({ resource: 'storage_bytes', allowed: limit, current: limit - 100 });
    expect(await storageUsageOf(stack.owner, tenant)).toBe(limit - 100);
    expect(await stack.owner.oneFirst(sql.type(z.object({ count: z.number() }))`SELECT count(*) AS count FROM files WHERE tenant_id = ${tenant}`)).toBe(0);

    // The reservation counts: the next presign finds the limit reached.
    expect((await presign(document(100), stack.stranger.accessToken)).status).toBe(200);
    expectProblem(await presign(document(1), stack.stranger.accessToken), 402, 'plan-limit-exceeded');
    await setStorageUsage(stack.owner, tenant, 0);
  });
});

describe('the staging cap', () => {
  const capped = useFilesGateway({ FILES_STAGING_MAX_PER_TENANT: '2' });

  it('answers 503 staging-limit-exceeded once FILES_STAGING_MAX_PER_TENANT files wait, presigned and uploaded alike', async () => {
    const tenant = await registerAccount(capped);
    expect((await send(capped, 'POST', '/files/presign', tenant.accessToken, document(10))).status).toBe(200);
    expect((await upload(capped, tenant.accessToken, uploadParts(randomBytes(10)))).status).toBe(201);
    const before = await storageUsageOf(stack.owner, tenant.tenant.id);

    const refused = await send(capped, 'POST', '/files/presign', tenant.accessToken, document(10));
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ type: capped.problemType('staging-limit-exceeded'), max: 2 });
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(await storageUsageOf(stack.owner, tenant.tenant.id)).toBe(before);
  });
});

describe('the files OpenAPI document', () => {
  it('describes POST /files/presign with its body and its 200 answer', async () => {
    const { body } = await call<{ paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>> }>(
      `${stack.gateway.baseUrl}/api/v1/files/openapi.json`,
    );
    const operation = body.paths['/v1/files/presign']?.post ?? body.paths['/files/presign']?.post;
    expect(operation).toBeDefined();
    expect(operation?.requestBody).toBeDefined();
    // The other refusals (402, 413, 503) are the document's `default` problem, as for every route.
    expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '401', 'default']));
  });
});

describe('the staged object consumer\'s reading of a notification', () => {
  const bucket = 'platform';
  const tenantId = newId();
  const fileId = newId();
  const event = (eventName: string, key: string, name = bucket) => Buffer.from(JSON.stringify({
    Records: [{ eventName, s3: { bucket: { name }, object: { key, size: 5 } } }],
  }));

  it('takes an object created under a staging key of the platform\'s bucket, and nothing else', () => {
    expect(stagedFilesOfNotification(event('s3:ObjectCreated:Put', `${tenantId}/staging/${fileId}`), bucket)).toEqual([{ tenantId, fileId }]);
    expect(stagedFilesOfNotification(event('s3:ObjectRemoved:Delete', `${tenantId}/staging/${fileId}`), bucket)).toEqual([]);
    expect(stagedFilesOfNotification(event('s3:ObjectCreated:Put', `${tenantId}/staging/${fileId}`, 'other'), bucket)).toEqual([]);
    expect(stagedFilesOfNotification(event('s3:ObjectCreated:Put', `${tenantId}/documents/${fileId}/original`), bucket)).toEqual([]);
    expect(stagedFilesOfNotification(event('s3:ObjectCreated:Put', `${tenantId}/staging/${fileId}/x`), bucket)).toEqual([]);
    // A file the gateway received itself: the gateway starts its scan, nothing waits for this PUT.
    expect(stagedFilesOfNotification(event('s3:ObjectCreated:Put', receivedStagingKeyOf(tenantId, fileId)), bucket)).toEqual([]);
    // The store's test event at its start, and anything that is not JSON.
    expect(stagedFilesOfNotification(Buffer.from('{"Service":"S3","Event":"s3:TestEvent"}'), bucket)).toEqual([]);
    expect(stagedFilesOfNotification(Buffer.from('not json'), bucket)).toEqual([]);
    expect(stagedFilesOfNotification(null, bucket)).toEqual([]);
  });
});

describe('presign → PUT → available, noticed through the store\'s notifications', () => {
  const logger = createLogger('files-presign-test', 'silent');
  let server: DevServer;
  let app: DatabasePool;
  let worker: Worker;
  let consumer: StagedObjectConsumer;

  beforeAll(async () => {
    server = await connectDevServer();
    app = await createDbPool(appUrl(), { maxPoolSize: 4, name: 'files-presign-test-app' });
    worker = await createTestWorker(server, {
      taskQueue: stack.gateway.config.files.taskQueue,
      activities: createFileScanActivities({ appPool: app, objectStore: stack.store, scanner: createClamdScanner(config().clamav), logger }),
    });
    consumer = new StagedObjectConsumer({
      kafka: createKafka(config().kafka, logger), temporal: server.client, appPool: app, objectStore: stack.store,
      topic: config().files.storeEventsTopic, groupId: `test.files.staged-objects.${newId()}`, logger,
    });
    await consumer.start();
  });

  afterAll(async () => {
    await consumer?.stop();
    await server?.close();
    await app?.end();
  });

  it('scans the PUT file with no further call of the client: available at its key, the reservation kept as its storage', async () => {
    const png = await samplePng(64, 48);
    await worker.runUntil(async () => {
      const before = await storageUsageOf(stack.owner, stack.account.tenant.id);
      const { body: presigned } = await presign({ bucket: 'assets', originalName: 'chart.png', mimeType: 'image/png', sizeBytes: png.length });
      expect((await put(presigned.uploadUrl, png, 'image/png')).status).toBe(200);

      await waitFor('the presigned file available', async () => (await rowOf(presigned.fileId)).status === 'available', 60_000, 250);
      const file = await read<FileObject & { thumbnails: Record<string, string> }>(stack.gateway, `/files/${presigned.fileId}?meta=1`, stack.account.accessToken);
      expect(file.body).toMatchObject({ id: presigned.fileId, status: 'available', size: png.length, mimeType: 'image/png', bucket: 'assets' });
      const content = await fetch(file.body.url!);
      expect(Buffer.from(await content.arrayBuffer()).equals(png)).toBe(true);
      // Counted once, at presign.
      expect(await storageUsageOf(stack.owner, stack.account.tenant.id)).toBe(before + png.length);
      // Staging is left empty of it, and another tenant still sees nothing.
      expect(await stagedKeysOf(stack.store, stack.account.tenant.id)).not.toContain(presigned.fields.key);
      expectProblem(await read(stack.gateway, `/files/${presigned.fileId}`, stack.stranger.accessToken), 404, 'file-not-found');

      await server.client.workflow.getHandle(fileScanWorkflowId(presigned.fileId)).result();
      // A second PUT of the still valid URL, after the scan: its notification finds the workflow closed,
      // changes nothing of the file, and its staged object (which nothing would scan) is removed.
      expect((await put(presigned.uploadUrl, randomBytes(png.length), 'image/png')).status).toBe(200);
      await waitFor('the late PUT removed from staging', async () => (await stagedSize(presigned.fields.key)) === null, 15_000, 100);
      expect((await rowOf(presigned.fileId)).status).toBe('available');
      expect(Buffer.from(await (await fetch((await read<FileObject>(stack.gateway, `/files/${presigned.fileId}?meta=1`, stack.account.accessToken)).body.url!)).arrayBuffer()).equals(png)).toBe(true);
    });
  });
});
