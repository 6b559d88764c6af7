import { randomBytes } from 'node:crypto';
import type { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { createFileScanActivities } from '../../../activities/files/scan.activities';
import { config } from '../../../common/config';
import { newId } from '../../../common/ids';
import { createLogger } from '../../../common/logger';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { receivedStagingKeyOf } from '../../../services/files/object-keys';
import { createClamdScanner } from '../../../services/files/scanner';
import { appUrl } from '../../helpers/db';
import {
  MB, read, setStorageUsage, stagedKeysOf, storageLimitOf, storageUsageOf, unfinishedStagingUploadsOf, type FileObject, type Problem,
} from '../../helpers/files';
import { expectProblem as problemOf, useFilesApiStack, useFilesGateway } from '../../helpers/files-api';
import { EICAR, samplePng } from '../../helpers/files-scan';
import { call, waitFor } from '../../helpers/http';
import { registerAccount } from '../../helpers/identity';
import { addMember } from '../../helpers/rbac';
import { connectDevServer, createTestWorker, type DevServer } from '../../helpers/temporal';

/**
 * Resumable uploads with the tus protocol (issue 17, beyond the specification;
 * services/files/tus.ts) through the real gateway, PostgreSQL and object store (Versity), spoken
 * with fetch (a tus client is a few headers). The scans the gateway starts go to a task queue no
 * worker polls, except in the last block, where a worker on the real Temporal dev server polls it
 * with the real clamd: create → PATCH, interrupted, HEAD, resume → available; EICAR → rejected.
 */
jest.setTimeout(120_000);

const stack = useFilesApiStack('files-tus-test');

const expectProblem = (response: { status: number; body: unknown }, status: number, type: string): Problem => problemOf(stack.gateway, response, status, type);

const TUS = { 'tus-resumable': '1.0.0' };
const CHUNK = 'application/offset+octet-stream';

/** Upload-Metadata: `key base64(value)` pairs. */
const metadataOf = (fields: Record<string, string>): string =>
  Object.entries(fields).map(([key, value]) => `${key} ${Buffer.from(value).toString('base64')}`).join(',');

const auth = (token: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

const document = (name = 'report.pdf'): Record<string, string> => ({ bucket: 'documents', originalName: name, mimeType: 'application/pdf' });

/** POST /files/tus. */
const create = (length: number | null, fields: Record<string, string> | string, token = stack.account.accessToken, headers: Record<string, string> = {}) =>
  call<Problem>(`${stack.gateway.baseUrl}/v1/files/tus`, {
    method: 'POST',
    headers: {
      ...TUS, ...auth(token),
      ...(length === null ? {} : { 'upload-length': String(length) }),
      'upload-metadata': typeof fields === 'string' ? fields : metadataOf(fields),
      ...headers,
    },
  });

/** The upload's URL from a creation's Location (relative to the gateway). */
const urlOf = (location: string | null): string => new URL(location ?? '', stack.gateway.baseUrl).href;
const fileIdOf = (location: string | null): string => (location ?? '').split('/').pop() ?? '';

/** A created upload's URL and file id. */
async function created(length: number, fields: Record<string, string>, token = stack.account.accessToken): Promise<{ url: string; fileId: string }> {
  const response = await create(length, fields, token);
  expect(response.status).toBe(201);
  const location = response.headers.get('location');
  return { url: urlOf(location), fileId: fileIdOf(location) };
}

const patch = (url: string, offset: number, body: Uint8Array | ReadableStream<Uint8Array>, token = stack.account.accessToken, type = CHUNK) =>
  call<Problem>(url, {
    method: 'PATCH', headers: { ...TUS, ...auth(token), 'upload-offset': String(offset), 'content-type': type },
    body, ...(body instanceof ReadableStream && { duplex: 'half' }),
  });

const head = (url: string, token = stack.account.accessToken) => fetch(url, { method: 'HEAD', headers: { ...TUS, ...auth(token) } });

const terminate = (url: string, token = stack.account.accessToken) => call<Problem>(url, { method: 'DELETE', headers: { ...TUS, ...auth(token) } });

const fileRow = z.object({ status: z.string(), sizeBytes: z.number(), mimeType: z.string(), rejectedReason: z.string().nullable(), meta: z.unknown() });

const rowOf = (id: string) => stack.owner.one(sql.type(fileRow)`
  SELECT status, size_bytes AS "sizeBytes", mime_type AS "mimeType", rejected_reason AS "rejectedReason", meta FROM files WHERE id = ${id}
`);

const filesOf = (tenantId: string) => stack.owner.oneFirst(sql.type(z.object({ count: z.number() }))`SELECT count(*)::int AS count FROM files WHERE tenant_id = ${tenantId}`);

/** Every staged key of the file: its object, and the tus store's info object and incomplete part. */
const leftoversOf = async (tenantId: string, fileId: string): Promise<string[]> => [
  ...(await stagedKeysOf(stack.store, tenantId)), ...(await unfinishedStagingUploadsOf(stack.store, tenantId)),
].filter((key) => key.startsWith(receivedStagingKeyOf(tenantId, fileId)));

describe('POST /files/tus', () => {
  it('creates an upload: 201 with Location and Upload-Expires, the file pending_scan with its length reserved, its info object in staging', async () => {
    const before = await storageUsageOf(stack.owner, stack.account.tenant.id);
    const response = await create(3000, { ...document(), meta: JSON.stringify({ project: 'atlas' }) });

    expect(response.status).toBe(201);
    expect(response.headers.get('tus-resumable')).toBe('1.0.0');
    const location = response.headers.get('location');
    expect(location).toMatch(/^\/v1\/files\/tus\/[0-9a-f-]{36}$/);
    const expires = Date.parse(response.headers.get('upload-expires') ?? '');
    expect(expires - Date.now()).toBeGreaterThan(stack.gateway.config.files.stagingTtlHours * 3_600_000 - 60_000);
    const fileId = fileIdOf(location);
    expect(await rowOf(fileId)).toEqual({ status: 'pending_scan', sizeBytes: 3000, mimeType: 'application/pdf', rejectedReason: null, meta: { project: 'atlas' } });
    expect(await storageUsageOf(stack.owner, stack.account.tenant.id)).toBe(before + 3000);
    // The tus store keeps its upload under the tenant's staging key, beside nothing else.
    expect(await leftoversOf(stack.account.tenant.id, fileId)).toEqual(expect.arrayContaining([`${receivedStagingKeyOf(stack.account.tenant.id, fileId)}.info`]));

    const offset = await head(urlOf(location));
    expect(offset.status).toBe(200);
    expect(offset.headers.get('upload-offset')).toBe('0');
    expect(offset.headers.get('upload-length')).toBe('3000');
    expect(offset.headers.get('cache-control')).toBe('no-store');
    // Not readable before its bytes and its scan.
    expectProblem(await read(stack.gateway, `/files/${fileId}`, stack.account.accessToken), 404, 'file-not-found');
  });

  it('takes the tus clients\' filename and filetype for originalName and mimeType', async () => {
    const { fileId } = await created(10, { bucket: 'assets', filename: 'notes.txt', filetype: 'text/plain' });
    expect(await rowOf(fileId)).toMatchObject({ mimeType: 'text/plain', sizeBytes: 10 });
  });

  it('refuses a bad bucket, metadata or length with 400, and records nothing', async () => {
    const tenant = stack.account.tenant.id;
    const before = await filesOf(tenant);
    expectProblem(await create(10, { ...document(), bucket: 'secrets' }), 400, 'bucket-invalid');
    expectProblem(await create(null, document()), 400, 'validation-error');
    expectProblem(await create(0, document()), 400, 'validation-error');
    expectProblem(await create(10, 'bucket !!notbase64'), 400, 'validation-error');
    // A refused field is named inside the header it came in.
    expect(expectProblem(await create(10, { bucket: 'documents' }), 400, 'validation-error').errors)
      .toEqual([expect.objectContaining({ field: 'Upload-Metadata.originalName', code: 'REQUIRED' })]);
    expect(expectProblem(await create(10, { ...document(), colour: 'red' }), 400, 'validation-error').errors)
      .toEqual([expect.objectContaining({ field: 'Upload-Metadata.colour', code: 'UNKNOWN_FIELD' })]);
    expectProblem(await create(10, { ...document(), meta: '[1]' }), 400, 'validation-error');
    expectProblem(await create(10, { ...document(), filename: 'twice.pdf' }), 400, 'validation-error');
    expectProblem(await create(10, document(), stack.account.accessToken, { 'tus-resumable': '0.2.2' }), 400, 'validation-error');
    expect(await filesOf(tenant)).toBe(before);
  });

  it('refuses a length over the declared type\'s limit (of any file without a type) with 413', async () => {
    const image = expectProblem(await create(10 * MB + 1, { bucket: 'avatars', originalName: 'me.png', mimeType: 'image/png' }), 413, 'payload-too-large');
    expect(image).toMatchObject({ limitBytes: 10 * MB });
    expectProblem(await create(50 * MB + 1, document()), 413, 'payload-too-large');
    expectProblem(await create(50 * MB + 1, { bucket: 'documents', originalName: 'blob' }), 413, 'payload-too-large');
    expect((await create(10 * MB + 1, { bucket: 'documents', originalName: 'blob' })).status).toBe(201);
  });

  it('needs a token, and files.write', async () => {
    expect((await create(10, document(), '')).status).toBe(401);
    const role = `file-reader-${newId()}`;
    await stack.owner.query(sql.unsafe`INSERT INTO roles (id, tenant_id, name, permissions) VALUES (${newId()}, ${stack.account.tenant.id}, ${role}, '{files.read}')`);
    const reader = await addMember(stack.gateway, stack.owner, stack.account.tenant.id, role);
    expectProblem(await create(10, document(), reader.token), 403, 'forbidden');
  });

  it('refuses a length that would pass the plan\'s storage_bytes with 402, recording nothing', async () => {
    const tenant = stack.stranger.tenant.id;
    const limit = await storageLimitOf(stack.owner, tenant);
    await setStorageUsage(stack.owner, tenant, limit - 100);
    const before = await filesOf(tenant);
    const over = expectProblem(await create(101, document(), stack.stranger.accessToken), 402, 'plan-limit-exceeded');
    expect(over.limit).toMatchObject({ resource: 'storage_bytes', allowed: limit, current: limit - 100 });
    expect(await filesOf(tenant)).toBe(before);
    expect(await storageUsageOf(stack.owner, tenant)).toBe(limit - 100);
    await setStorageUsage(stack.owner, tenant, 0);
  });
});

describe('HEAD, PATCH and DELETE /files/tus/:id', () => {
  it('appends at the offset: 204 with the new offset, 409 at another offset, 415 for another content type, 413 past the length', async () => {
    const bytes = randomBytes(3000);
    const { url } = await created(bytes.length, document());

    const first = await patch(url, 0, bytes.subarray(0, 1000));
    expect(first.status).toBe(204);
    expect(first.headers.get('upload-offset')).toBe('1000');
    expectProblem(await patch(url, 0, bytes.subarray(0, 10)), 409, 'conflict');
    expectProblem(await patch(url, 1000, bytes.subarray(1000, 1010), stack.account.accessToken, 'application/octet-stream'), 415, 'unsupported-media-type');
    expectProblem(await patch(url, 1000, randomBytes(2001)), 413, 'payload-too-large');
    expect((await head(url)).headers.get('upload-offset')).toBe('1000');
  });

  it('is 404 to another tenant, which changes nothing of the upload', async () => {
    const bytes = randomBytes(2000);
    const { url, fileId } = await created(bytes.length, document());
    expect((await patch(url, 0, bytes.subarray(0, 500))).status).toBe(204);

    expect((await head(url, stack.stranger.accessToken)).status).toBe(404);
    expectProblem(await patch(url, 500, bytes.subarray(500), stack.stranger.accessToken), 404, 'file-not-found');
    expectProblem(await terminate(url, stack.stranger.accessToken), 404, 'file-not-found');
    expect((await head(url)).headers.get('upload-offset')).toBe('500');
    expect((await rowOf(fileId)).status).toBe('pending_scan');
    // Nor does it reach anything under its own tenant's prefix with that id, nor an unknown id under the caller's.
    expect(await leftoversOf(stack.stranger.tenant.id, fileId)).toEqual([]);
    expect((await head(`${stack.gateway.baseUrl}/v1/files/tus/${newId()}`)).status).toBe(404);
  });

  it('terminates an incomplete upload: 204, the file rejected upload-terminated, its reservation and its objects gone', async () => {
    const tenant = stack.account.tenant.id;
    const bytes = randomBytes(1500);
    const before = await storageUsageOf(stack.owner, tenant);
    const { url, fileId } = await created(bytes.length, document());
    expect((await patch(url, 0, bytes.subarray(0, 700))).status).toBe(204);
    expect(await storageUsageOf(stack.owner, tenant)).toBe(before + 1500);

    const response = await terminate(url);
    expect(response.status).toBe(204);
    expect(await rowOf(fileId)).toMatchObject({ status: 'rejected', rejectedReason: 'upload-terminated' });
    expect(await storageUsageOf(stack.owner, tenant)).toBe(before);
    expect(await leftoversOf(tenant, fileId)).toEqual([]);
    expect((await head(url)).status).toBe(404);
  });

  it('answers OPTIONS without a token with the protocol\'s capabilities', async () => {
    for (const path of ['/v1/files/tus', `/v1/files/tus/${newId()}`]) {
      const response = await fetch(`${stack.gateway.baseUrl}${path}`, { method: 'OPTIONS' });
      expect(response.status).toBe(204);
      expect(response.headers.get('tus-version')).toBe('1.0.0');
      expect(response.headers.get('tus-extension')).toBe('creation,termination,expiration');
      expect(response.headers.get('tus-max-size')).toBe(String(50 * MB));
      expect(response.headers.get('access-control-allow-methods')).toContain('PATCH');
    }
  });
});

describe('a file declared without a type, whose detected type has a smaller limit', () => {
  const small = useFilesGateway({ FILES_MAX_IMAGE_SIZE_MB: '1' });

  it('is rejected too-large with 413 at its last byte, its reservation and its objects released', async () => {
    const account = await registerAccount(small);
    const tenant = account.tenant.id;
    // A PNG by its first bytes (which is all detection reads), over the image limit of 1 MB.
    const bytes = Buffer.concat([await samplePng(8, 8), randomBytes(MB)]);
    const before = await storageUsageOf(stack.owner, tenant);
    const creation = await call(`${small.baseUrl}/v1/files/tus`, {
      method: 'POST',
      headers: { ...TUS, ...auth(account.accessToken), 'upload-length': String(bytes.length), 'upload-metadata': metadataOf({ bucket: 'assets', originalName: 'big' }) },
    });
    expect(creation.status).toBe(201);
    const url = new URL(creation.headers.get('location') ?? '', small.baseUrl).href;
    const fileId = fileIdOf(creation.headers.get('location'));
    expect(await storageUsageOf(stack.owner, tenant)).toBe(before + bytes.length);

    const last = await patch(url, 0, bytes, account.accessToken);
    expect(problemOf(small, last, 413, 'payload-too-large')).toMatchObject({ limitBytes: MB });
    expect(await rowOf(fileId)).toMatchObject({ status: 'rejected', rejectedReason: 'too-large' });
    expect(await storageUsageOf(stack.owner, tenant)).toBe(before);
    expect(await leftoversOf(tenant, fileId)).toEqual([]);
  });
});

describe('the files OpenAPI document', () => {
  it('describes the tus operations', async () => {
    const { body } = await call<{ paths: Record<string, Record<string, { parameters?: Array<{ name: string }> }>> }>(
      `${stack.gateway.baseUrl}/api/v1/files/openapi.json`,
    );
    expect(Object.keys(body.paths['/files/tus'] ?? {}).sort()).toEqual(['options', 'post']);
    expect(Object.keys(body.paths['/files/tus/{id}'] ?? {}).sort()).toEqual(['delete', 'head', 'options', 'patch']);
    expect(body.paths['/files/tus'].post.parameters?.map((parameter) => parameter.name)).toEqual(
      expect.arrayContaining(['Tus-Resumable', 'Upload-Length', 'Upload-Metadata']),
    );
  });
});

describe('tus → scan → available or rejected, with a worker on the dev server and the real clamd', () => {
  const logger = createLogger('files-tus-test', 'silent');
  let server: DevServer;
  let app: DatabasePool;

  beforeAll(async () => {
    server = await connectDevServer();
    app = await createDbPool(appUrl(), { maxPoolSize: 4, name: 'files-tus-test-app' });
  });

  /** A worker polls the gateway's files task queue while `work` runs (a Worker runs once). */
  async function scanning(work: () => Promise<void>): Promise<void> {
    const worker: Worker = await createTestWorker(server, {
      taskQueue: stack.gateway.config.files.taskQueue,
      activities: createFileScanActivities({ appPool: app, objectStore: stack.store, scanner: createClamdScanner(config().clamav), logger }),
    });
    await worker.runUntil(work);
  }

  afterAll(async () => {
    await server?.close();
    await app?.end();
  });

  it('resumes after an interrupted PATCH from the offset HEAD gives, and the file becomes available with its detected type', async () => {
    const tenant = stack.account.tenant.id;
    const png = await samplePng(640, 480);
    const half = Math.floor(png.length / 2);
    await scanning(async () => {
      // No mimeType: detected from the first bytes once they are all in.
      const { url, fileId } = await created(png.length, { bucket: 'assets', originalName: 'chart.png' });
      expect(await rowOf(fileId)).toMatchObject({ mimeType: 'application/octet-stream' });

      const first = await patch(url, 0, png.subarray(0, half));
      expect(first.status).toBe(204);
      expect((await head(url)).headers.get('upload-offset')).toBe(String(half));

      // The connection breaks in the middle of the next PATCH.
      const broken = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(png.subarray(half, half + 100));
          setTimeout(() => controller.error(new Error('connection lost')), 200);
        },
      });
      await expect(patch(url, half, broken)).rejects.toThrow();

      // HEAD tells where to resume (whatever the store kept of the broken request), and the rest follows from there.
      let offset = -1;
      await waitFor('the broken PATCH to release its upload', async () => {
        const answer = await head(url);
        offset = Number(answer.headers.get('upload-offset'));
        return answer.status === 200;
      }, 15_000, 250);
      expect(offset).toBeGreaterThanOrEqual(0);
      expect(offset).toBeLessThanOrEqual(half + 100);
      const last = await patch(url, offset, png.subarray(offset));
      expect(last.status).toBe(204);
      expect(last.headers.get('upload-offset')).toBe(String(png.length));

      await waitFor('the tus file available', async () => (await rowOf(fileId)).status === 'available', 60_000, 250);
      const file = await read<FileObject>(stack.gateway, `/files/${fileId}?meta=1`, stack.account.accessToken);
      expect(file.body).toMatchObject({ id: fileId, status: 'available', size: png.length, mimeType: 'image/png', bucket: 'assets' });
      expect(Buffer.from(await (await fetch(file.body.url!)).arrayBuffer()).equals(png)).toBe(true);
      // Staging is left empty of it: object, info object, incomplete part, multipart upload.
      expect(await leftoversOf(tenant, fileId)).toEqual([]);
      // The upload is over: its URL answers 404 like any file no longer waiting for bytes.
      expect((await head(url)).status).toBe(404);
      expectProblem(await read(stack.gateway, `/files/${fileId}`, stack.stranger.accessToken), 404, 'file-not-found');
    });
  });

  it('rejects an EICAR file uploaded with tus, releasing its storage and leaving nothing in staging', async () => {
    const tenant = stack.account.tenant.id;
    const eicar = Buffer.from(EICAR);
    await scanning(async () => {
      const before = await storageUsageOf(stack.owner, tenant);
      const { url, fileId } = await created(eicar.length, { bucket: 'documents', originalName: 'eicar.com', mimeType: 'application/octet-stream' });
      expect((await patch(url, 0, eicar.subarray(0, 20))).status).toBe(204);
      expect((await patch(url, 20, eicar.subarray(20))).status).toBe(204);

      await waitFor('the tus EICAR file rejected', async () => (await rowOf(fileId)).status === 'rejected', 60_000, 250);
      expect((await rowOf(fileId)).rejectedReason).toMatch(/^infected: /);
      expect(await storageUsageOf(stack.owner, tenant)).toBe(before);
      expect(await leftoversOf(tenant, fileId)).toEqual([]);
      expectProblem(await read(stack.gateway, `/files/${fileId}`, stack.account.accessToken), 422, 'file-rejected');
    });
  });
});
