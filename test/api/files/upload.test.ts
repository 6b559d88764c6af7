import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { z } from 'zod';
import { createObjectStore, type ObjectStore } from '../../../common/object-store';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import {
  MB, formOf, read, setStorageUsage, stagedKeysOf, storageLimitOf, storageUsageOf, unfinishedStagingUploadsOf, unpolledTaskQueue, upload, uploadForm, uploadParts,
  type FormPart, type Problem,
} from '../../helpers/files';
import { expectProblem as problemOf, startFilesGateway, useFilesGateway } from '../../helpers/files-api';
import { samplePng } from '../../helpers/files-scan';
import { registerAccount, type RegisteredAccount } from '../../helpers/identity';

/**
 * POST /files/upload (docs/reference/files.md, rules 1 to 7; issue 17) through the real gateway, PostgreSQL and object
 * store. The scans the gateway starts go to a task queue no worker polls, so every upload stays
 * pending_scan here; the scan itself is test/workflows/file-scan.workflow.test.ts's subject.
 */
jest.setTimeout(90_000);

let gateway: TestGateway;
let owner: DatabasePool;
let store: ObjectStore;
let png: Buffer;

beforeAll(async () => {
  await migrateSharedDatabase();
  [gateway, owner, png] = await Promise.all([
    startFilesGateway(),
    createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'files-upload-test' }),
    samplePng(16, 16),
  ]);
  store = createObjectStore(gateway.config.s3);
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

const fileRow = z.object({
  status: z.string(), stagingKey: z.string(), objectKey: z.string().nullable(), sha256: z.string().nullable(),
  meta: z.record(z.string(), z.unknown()).nullable(), sizeBytes: z.number(),
});

function rowOf(id: string) {
  return owner.one(sql.type(fileRow)`
    SELECT status, staging_key AS "stagingKey", object_key AS "objectKey", sha256, meta, size_bytes AS "sizeBytes" FROM files WHERE id = ${id}
  `);
}

const expectProblem = (response: { status: number; body: unknown }, status: number, type: string): Problem => problemOf(gateway, response, status, type);

/** A refused upload leaves nothing in staging (no object, no unfinished multipart upload) and no row. */
async function expectNothingStaged(account: RegisteredAccount): Promise<void> {
  expect(await stagedKeysOf(store, account.tenant.id)).toEqual([]);
  expect(await unfinishedStagingUploadsOf(store, account.tenant.id)).toEqual([]);
  expect(await owner.oneFirst(sql.type(z.object({ count: z.number() }))`
    SELECT count(*) AS count FROM files WHERE tenant_id = ${account.tenant.id}
  `)).toBe(0);
}

describe('an accepted upload', () => {
  it('answers 201 with the file pending_scan, url null, its bytes in staging and counted as storage', async () => {
    const account = await registerAccount(gateway);
    const bytes = randomBytes(2048);
    const response = await upload(gateway, account.accessToken, uploadParts(bytes, {
      bucket: 'documents', originalName: 'Quarterly report.pdf', mimeType: 'application/pdf', meta: JSON.stringify({ project: 'apollo' }),
    }));

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(String), originalName: 'Quarterly report.pdf', mimeType: 'application/pdf', size: 2048, bucket: 'documents',
      status: 'pending_scan', url: null, uploadedBy: account.user.id, tenantId: account.tenant.id,
      createdAt: expect.any(String), deletedAt: null,
    });
    const row = await rowOf(response.body.id);
    expect(row).toEqual({
      status: 'pending_scan', stagingKey: `${account.tenant.id}/staging/received-${response.body.id}`, objectKey: null,
      sha256: createHash('sha256').update(bytes).digest('hex'), meta: { project: 'apollo' }, sizeBytes: 2048,
    });
    expect(await stagedKeysOf(store, account.tenant.id)).toEqual([row.stagingKey]);
    const staged = await store.s3.statObject(store.bucket, row.stagingKey);
    expect(staged.size).toBe(2048);
    expect(await storageUsageOf(owner, account.tenant.id)).toBe(2048);
  });

  it('is not readable while its scan is pending: 404 file-not-found', async () => {
    const account = await registerAccount(gateway);
    const { body: file } = await upload(gateway, account.accessToken, uploadParts(randomBytes(64)));
    expectProblem(await read(gateway, `/files/${file.id}`, account.accessToken), 404, 'file-not-found');
    expectProblem(await read(gateway, `/files/${file.id}?download=1`, account.accessToken), 404, 'file-not-found');
    expectProblem(await read(gateway, `/files/${file.id}/url`, account.accessToken), 404, 'file-not-found');
  });

  it('detects the type from the first bytes, never from the name: a PNG named .txt is image/png', async () => {
    const account = await registerAccount(gateway);
    const detected = await upload(gateway, account.accessToken, uploadParts(png, { bucket: 'assets' }, 'notes.txt'));
    expect(detected.status).toBe(201);
    expect(detected.body).toMatchObject({ originalName: 'notes.txt', mimeType: 'image/png', size: png.length });

    const unknown = await upload(gateway, account.accessToken, uploadParts(Buffer.from('plain words, no signature'), {}, 'photo.png'));
    expect(unknown.body.mimeType).toBe('application/octet-stream');

    const declared = await upload(gateway, account.accessToken, uploadParts(Buffer.from('a,b\n1,2\n'), { mimeType: 'text/csv' }, 'data.csv'));
    expect(declared.body.mimeType).toBe('text/csv');
  });

  it('takes the parts in any order: fields after the file are read once the form ends', async () => {
    const account = await registerAccount(gateway);
    const response = await upload(gateway, account.accessToken, [
      ['meta', '{"n":1}'], ['file', { bytes: png, filename: 'x.png' }], ['bucket', 'avatars'], ['originalName', 'me.png'], ['mimeType', 'image/x-custom'],
    ]);
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ bucket: 'avatars', originalName: 'me.png', mimeType: 'image/x-custom', size: png.length });
    expect((await rowOf(response.body.id)).meta).toEqual({ n: 1 });
  });

  it('accepts a document above the image limit (documents may be 50 MB)', async () => {
    const account = await registerAccount(gateway);
    const response = await upload(gateway, account.accessToken, uploadParts(randomBytes(11 * MB), { mimeType: 'application/zip' }, 'big.zip'));
    expect(response.status).toBe(201);
    expect(response.body.size).toBe(11 * MB);
  });
});

describe('a refused upload', () => {
  let account: RegisteredAccount;
  beforeAll(async () => {
    account = await registerAccount(gateway);
  });
  afterEach(async () => {
    await expectNothingStaged(account);
  });

  it('names an unknown bucket: 400 bucket-invalid', async () => {
    const problem = expectProblem(await upload(gateway, account.accessToken, uploadParts(png, { bucket: 'photos' })), 400, 'bucket-invalid');
    expect(problem.buckets).toEqual(['avatars', 'assets', 'documents', 'exports', 'modules']);
  });

  it('lacks originalName: 400 validation-error', async () => {
    const problem = expectProblem(await upload(gateway, account.accessToken, [['bucket', 'assets'], ['file', { bytes: png, filename: 'a.png' }]]),
      400, 'validation-error');
    expect(problem.errors).toEqual([{ field: 'originalName', code: 'REQUIRED', message: expect.any(String) }]);
  });

  it('carries meta over 4 KB, or meta that is not a JSON object: 400 validation-error', async () => {
    const big = expectProblem(await upload(gateway, account.accessToken, uploadParts(png, { meta: JSON.stringify({ note: 'x'.repeat(4100) }) })),
      400, 'validation-error');
    expect(big.errors).toEqual([{ field: 'meta', code: 'TOO_LONG', message: expect.any(String) }]);
    for (const meta of ['not json', '[1,2]', '"text"', '{"__proto__": {"admin": true}}', '{"a": {"constructor": {"prototype": {}}}}']) {
      const problem = expectProblem(await upload(gateway, account.accessToken, uploadParts(png, { meta })), 400, 'validation-error');
      expect(problem.errors).toEqual([{ field: 'meta', code: 'INVALID_VALUE', message: expect.any(String) }]);
    }
  });

  it('sends no file, an empty file or two files: 400 validation-error', async () => {
    const file: FormPart = ['file', { bytes: png, filename: 'a.png' }];
    const none = expectProblem(await upload(gateway, account.accessToken, [['bucket', 'assets'], ['originalName', 'a.png']]), 400, 'validation-error');
    expect(none.errors).toEqual([{ field: 'file', code: 'REQUIRED', message: expect.any(String) }]);

    const empty = expectProblem(await upload(gateway, account.accessToken, uploadParts(new Uint8Array(0))), 400, 'validation-error');
    expect(empty.errors).toEqual([{ field: 'file', code: 'TOO_SHORT', message: 'is empty' }]);

    const twice = expectProblem(await upload(gateway, account.accessToken, [...uploadParts(png), file]), 400, 'validation-error');
    expect(twice.errors).toEqual([{ field: 'file', code: 'DUPLICATE_VALUE', message: expect.any(String) }]);
  });

  it('sends its fields after the file: checked once the form is read, the staged file removed', async () => {
    const file: FormPart = ['file', { bytes: png, filename: 'a.png' }];
    expectProblem(await upload(gateway, account.accessToken, [file, ['bucket', 'photos'], ['originalName', 'a.png']]), 400, 'bucket-invalid');
    const missing = expectProblem(await upload(gateway, account.accessToken, [file, ['bucket', 'assets']]), 400, 'validation-error');
    expect(missing.errors).toEqual([{ field: 'originalName', code: 'REQUIRED', message: expect.any(String) }]);
    // Streamed as a document (its bytes show no type), then declared an image: over the image limit.
    const declaredLate = expectProblem(await upload(gateway, account.accessToken, [
      ['bucket', 'assets'], ['originalName', 'late.png'], ['file', { bytes: randomBytes(10 * MB + 1), filename: 'late.png' }], ['mimeType', 'image/png'],
    ]), 413, 'payload-too-large');
    expect(declaredLate.limitBytes).toBe(10 * MB);
  });

  it('declares a mimeType that is not a media type (a line break would end its header): 400 validation-error', async () => {
    for (const mimeType of ['png', 'image/png\r\nX-Evil: 1', 'text/plain;\tcharset=utf-8']) {
      const problem = expectProblem(await upload(gateway, account.accessToken, uploadParts(png, { mimeType })), 400, 'validation-error');
      expect(problem.errors).toEqual([{ field: 'mimeType', code: 'INVALID_FORMAT', message: expect.any(String) }]);
    }
  });

  it('is not multipart: 415', async () => {
    expectProblem(await uploadForm(gateway, account.accessToken, JSON.stringify({ bucket: 'assets' }), { 'content-type': 'application/json' }),
      415, 'unsupported-media-type');
  });

  it('is an image over 10 MB: 413 payload-too-large, the partial object removed', async () => {
    const big = Buffer.concat([png, randomBytes(11 * MB)]);
    const response = await upload(gateway, account.accessToken, uploadParts(big, { bucket: 'assets' }, 'huge.png'));
    const problem = expectProblem(response, 413, 'payload-too-large');
    expect(problem.limitBytes).toBe(10 * MB);
    expect(problem.detail).toMatch(/image/);
  });

  it('declares a length no file may have: 413 before a byte of the body is sent', async () => {
    // Only the headers go out: the answer cannot have waited for the 60 MB they announce.
    const { status, body } = await new Promise<{ status: number; body: Problem }>((resolve, reject) => {
      const sent = httpRequest(`${gateway.baseUrl}/v1/files/upload`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${account.accessToken}`, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(60 * MB),
        },
      }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => { text += chunk.toString(); });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as Problem }));
      });
      sent.on('error', reject);
      sent.flushHeaders();
    });
    expectProblem({ status, body }, 413, 'payload-too-large');
  });

  it('needs a token, and files.write', async () => {
    expect((await uploadForm(gateway, '', formOf(uploadParts(png)))).status).toBe(401);
    const reader = await registerAccount(gateway);
    await owner.query(sql.unsafe`UPDATE roles SET permissions = '{files.read}' WHERE tenant_id = ${reader.tenant.id} AND name = 'owner'`);
    expectProblem(await upload(gateway, reader.accessToken, uploadParts(png)), 403, 'forbidden');
  });
});

describe('the plan\'s storage_bytes', () => {
  it('refuses an upload that would pass the limit (402), and one when the limit is reached already', async () => {
    const account = await registerAccount(gateway);
    const limit = await storageLimitOf(owner, account.tenant.id);
    await setStorageUsage(owner, account.tenant.id, limit - 100);
    const over = expectProblem(await upload(gateway, account.accessToken, uploadParts(randomBytes(101))), 402, 'plan-limit-exceeded');
    expect(over.limit).toEqual({ resource: 'storage_bytes', allowed: limit, current: limit - 100, planId: expect.any(String) });
    await expectNothingStaged(account);
    expect(await storageUsageOf(owner, account.tenant.id)).toBe(limit - 100);

    expect((await upload(gateway, account.accessToken, uploadParts(randomBytes(100)))).status).toBe(201);
    expect(await storageUsageOf(owner, account.tenant.id)).toBe(limit);
    expectProblem(await upload(gateway, account.accessToken, uploadParts(randomBytes(1))), 402, 'plan-limit-exceeded');
  });
});

describe('without the workflow service', () => {
  it('answers 503 before reading the body: no scan could be started for the file', async () => {
    const cut = await startTestGateway({ env: { FILES_TASK_QUEUE: unpolledTaskQueue(), TEMPORAL_ADDRESS: '127.0.0.1:1' } });
    try {
      // Registration starts the tenant's subscription workflow: it goes through the connected gateway.
      const account = await registerAccount(gateway);
      const response = await upload(cut, account.accessToken, uploadParts(randomBytes(10)));
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({ type: cut.problemType('service-unavailable'), detail: expect.stringMatching(/workflow service/) });
      await expectNothingStaged(account);
    } finally {
      await cut.close();
    }
  });
});

describe('the staging cap', () => {
  const capped = useFilesGateway({ FILES_STAGING_MAX_PER_TENANT: '2' });

  it('answers 503 staging-limit-exceeded while the tenant has FILES_STAGING_MAX_PER_TENANT files waiting for their scan', async () => {
    const account = await registerAccount(capped);
    const other = await registerAccount(capped);
    for (let i = 0; i < 2; i += 1) expect((await upload(capped, account.accessToken, uploadParts(randomBytes(10)))).status).toBe(201);

    const response = await upload(capped, account.accessToken, uploadParts(randomBytes(10)));
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ type: capped.problemType('staging-limit-exceeded'), max: 2 });
    expect(response.headers.get('retry-after')).toBe('30');
    expect(await stagedKeysOf(store, account.tenant.id)).toHaveLength(2);
    // A deliberate answer, not a failure: more of them open no circuit breaker for the other tenants.
    for (let i = 0; i < 5; i += 1) expect((await upload(capped, account.accessToken, uploadParts(randomBytes(10)))).status).toBe(503);
    // The cap is per tenant.
    expect((await upload(capped, other.accessToken, uploadParts(randomBytes(10)))).status).toBe(201);

    // A file whose scan is over no longer waits in staging.
    await owner.query(sql.unsafe`UPDATE files SET status = 'rejected' WHERE tenant_id = ${account.tenant.id}
      AND id = (SELECT id FROM files WHERE tenant_id = ${account.tenant.id} ORDER BY id LIMIT 1)`);
    expect((await upload(capped, account.accessToken, uploadParts(randomBytes(10)))).status).toBe(201);
  });
});
