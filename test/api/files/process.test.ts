import { buffer } from 'node:stream/consumers';
import type { Worker } from '@temporalio/worker';
import sharp from 'sharp';
import { createFileProcessActivities } from '../../../activities/files/process.activities';
import { createObjectStore, type ObjectStore } from '../../../common/object-store';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { quietLogger } from '../../helpers/audit';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { makeAvailable, read, setStatus, type FileObject, type Problem } from '../../helpers/files';
import { expectProblem as problemOf } from '../../helpers/files-api';
import { samplePng, stageFile } from '../../helpers/files-scan';
import { call, waitFor, type JsonResponse } from '../../helpers/http';
import { registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { addMember } from '../../helpers/rbac';
import { connectDevServer, createTestWorker, platformBundle, uniqueTaskQueue, type DevServer } from '../../helpers/temporal';

/**
 * POST /files/:id/process (docs/reference/files.md, rules 16 and 17; issue 17) through the real gateway, PostgreSQL, object
 * store and Temporal dev server: the jobs the gateway starts run on a worker of this test (the
 * processing activities, on a task queue of its own), followed at GET /v1/jobs/{jobId}. Files are
 * made available as a clean scan leaves them (helpers/files makeAvailable); uploading and scanning
 * are other tests' subjects.
 */
jest.setTimeout(90_000);

interface Accepted {
  fileId: string;
  jobId: string;
  status: string;
  startedAt: string;
}

interface JobView {
  jobId: string;
  kind: string;
  status: string;
  completedAt: string | null;
  result?: Record<string, unknown>;
  error?: Problem;
}

let gateway: TestGateway;
let owner: DatabasePool;
let app: DatabasePool;
let store: ObjectStore;
let server: DevServer;
let worker: Worker;
let running: Promise<void>;
let account: RegisteredAccount;
let stranger: RegisteredAccount;
const taskQueue = uniqueTaskQueue('files-process-api');

beforeAll(async () => {
  // The workflow bundle first: webpack fails to load under Jest once the gateway's modules are loaded.
  await Promise.all([migrateSharedDatabase(), platformBundle()]);
  [gateway, owner, app, server] = await Promise.all([
    startTestGateway({ env: { FILES_TASK_QUEUE: taskQueue }, waitUntilReady: true }),
    createDbPool(ownerUrl(), { name: 'files-process-test', maxPoolSize: 2 }),
    createDbPool(appUrl(), { name: 'files-process-test-app', maxPoolSize: 4 }),
    connectDevServer(),
  ]);
  store = createObjectStore(gateway.config.s3);
  worker = await createTestWorker(server, {
    taskQueue, activities: createFileProcessActivities({ appPool: app, objectStore: store, logger: quietLogger() }),
  });
  running = worker.run();
  [account, stranger] = await Promise.all([registerAccount(gateway), registerAccount(gateway)]);
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await Promise.all([gateway?.close(), owner?.end(), app?.end(), server?.close()]);
});

const expectProblem = (response: { status: number; body: unknown }, status: number, type: string): Problem => problemOf(gateway, response, status, type);

function processFile<T = Accepted>(id: string, body: unknown, token = account.accessToken): Promise<JsonResponse<T>> {
  return call<T>(`${gateway.baseUrl}/v1/files/${id}/process`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
}

/** A file of `by`'s tenant as the upload route leaves it (pending_scan), made available with `content` unless asked not to. */
async function storedFile(content: Buffer, mimeType: string, options: { by?: RegisteredAccount; available?: boolean } = {}): Promise<FileObject> {
  const tenantId = (options.by ?? account).tenant.id;
  const { fileId } = await stageFile(owner, store, tenantId, { mimeType, content, bucket: 'assets', originalName: 'photo.png' });
  const file = { id: fileId, tenantId, bucket: 'assets', mimeType } as FileObject;
  if (options.available ?? true) await makeAvailable(owner, store, file, content, { icon_32: await samplePng(32, 32) });
  return file;
}

/** The job once it has ended (GET /v1/jobs/{jobId} until it is no longer running). */
async function finishedJob(jobId: string): Promise<JobView> {
  let job: JsonResponse<JobView> | undefined;
  await waitFor(`job ${jobId}`, async () => {
    job = await read<JobView>(gateway, `/jobs/${jobId}`, account.accessToken);
    return job.status === 200 && job.body.status !== 'running';
  }, 60_000);
  return job!.body;
}

const rotate = { operations: [{ rotate: { degrees: 90 } }] };

describe('POST /files/:id/process', () => {
  it('answers 202 with the job, which replaces the content in order and renders the thumbnails again', async () => {
    const file = await storedFile(await samplePng(640, 480), 'image/png');

    const accepted = await processFile(file.id, {
      operations: [{ crop: { x: 0, y: 0, width: 600, height: 400 } }, { resize: { width: 300 } }, { rotate: { degrees: 270 } }, { convert: { format: 'jpeg' } }],
      quality: 70,
    });

    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ fileId: file.id, jobId: expect.stringMatching(/^files-process\.[0-9a-f-]{36}$/), status: 'processing', startedAt: expect.any(String) });
    expect(accepted.headers.get('location')).toBe(`/v1/jobs/${accepted.body.jobId}`);
    // The file shows its job at once (processing, or already completed).
    const meanwhile = await read(gateway, `/files/${file.id}?meta=1`, account.accessToken);
    expect(meanwhile.body).toMatchObject({ processing: { jobId: accepted.body.jobId, status: expect.stringMatching(/^(processing|completed)$/) } });

    const job = await finishedJob(accepted.body.jobId);
    expect(job).toMatchObject({
      jobId: accepted.body.jobId, kind: 'files-process', status: 'completed', completedAt: expect.any(String),
      result: { fileId: file.id, mimeType: 'image/jpeg', size: expect.any(Number), width: 200, height: 300 },
    });

    const details = await read(gateway, `/files/${file.id}?meta=1`, account.accessToken);
    expect(details.status).toBe(200);
    expect(details.body).toMatchObject({
      status: 'available', mimeType: 'image/jpeg', size: job.result!.size, url: expect.stringContaining('/versions/'),
      processing: { jobId: accepted.body.jobId, status: 'completed', startedAt: accepted.body.startedAt, completedAt: expect.any(String) },
    });
    expect(Object.keys(details.body.thumbnails!).sort()).toEqual(['card_300', 'icon_32']);
    const icon = await sharp(Buffer.from(await (await fetch(details.body.thumbnails!.icon_32)).arrayBuffer())).metadata();
    expect({ width: icon.width, height: icon.height }).toEqual({ width: 32, height: 32 });

    const download = await fetch(`${gateway.baseUrl}/v1/files/${file.id}?download=1`, { headers: { authorization: `Bearer ${account.accessToken}` } });
    expect(download.headers.get('content-type')).toBe('image/jpeg');
    const content = await sharp(await buffer(download.body!)).metadata();
    expect({ format: content.format, width: content.width, height: content.height }).toEqual({ format: 'jpeg', width: 200, height: 300 });
  });

  it('ends the job failed with 422 processing-failed for an image whose pixels cannot be decoded; the file keeps its content', async () => {
    const png = await samplePng(640, 480);
    const file = await storedFile(png.subarray(0, Math.floor(png.length / 2)), 'image/png');

    const accepted = await processFile(file.id, rotate);
    expect(accepted.status).toBe(202);

    const job = await finishedJob(accepted.body.jobId);
    expect(job).toMatchObject({ status: 'failed', error: { type: gateway.problemType('processing-failed'), status: 422 } });
    expect(job.result).toBeUndefined();
    const details = await read(gateway, `/files/${file.id}?meta=1`, account.accessToken);
    expect(details.body).toMatchObject({ mimeType: 'image/png', size: Math.floor(png.length / 2), url: expect.stringContaining('/original'), processing: { status: 'failed' } });
  });

  it.each([
    ['no operations', { operations: [] }],
    ['operations missing', { quality: 80 }],
    ['an unknown operation', { operations: [{ flip: { axis: 'x' } }] }],
    ['two operations in one object', { operations: [{ rotate: { degrees: 90 }, resize: { width: 10 } }] }],
    ['quality 0', { ...rotate, quality: 0 }],
    ['quality 101', { ...rotate, quality: 101 }],
    ['a fractional quality', { ...rotate, quality: 50.5 }],
    ['a crop of width 0', { operations: [{ crop: { x: 0, y: 0, width: 0, height: 10 } }] }],
    ['a crop at a negative x', { operations: [{ crop: { x: -1, y: 0, width: 10, height: 10 } }] }],
    ['a crop without its height', { operations: [{ crop: { x: 0, y: 0, width: 10 } }] }],
    ['a resize with neither side', { operations: [{ resize: {} }] }],
    ['a fractional resize', { operations: [{ resize: { width: 10.5 } }] }],
    ['a negative resize', { operations: [{ resize: { height: -10 } }] }],
    ['a convert to gif', { operations: [{ convert: { format: 'gif' } }] }],
    ['a rotation of 45 degrees', { operations: [{ rotate: { degrees: 45 } }] }],
    ['more than 20 operations', { operations: Array.from({ length: 21 }, () => ({ rotate: { degrees: 180 } })) }],
  ])('is 400 validation-error for %s', async (_case, body) => {
    const file = await storedFile(await samplePng(64, 64), 'image/png');
    expectProblem(await processFile(file.id, body), 400, 'validation-error');
  });

  it('is 404 file-not-found for an unknown id, a pending_scan file, a deleted file and another tenant\'s file', async () => {
    const pending = await storedFile(await samplePng(64, 64), 'image/png', { available: false });
    const deleted = await storedFile(await samplePng(64, 64), 'image/png');
    await setStatus(owner, deleted.id, 'deleted');
    const theirs = await storedFile(await samplePng(64, 64), 'image/png', { by: stranger });

    expectProblem(await processFile('0190a5c0-0000-7000-8000-000000000000', rotate), 404, 'file-not-found');
    expectProblem(await processFile(pending.id, rotate), 404, 'file-not-found');
    expectProblem(await processFile(deleted.id, rotate), 404, 'file-not-found');
    expectProblem(await processFile(theirs.id, rotate), 404, 'file-not-found');
  });

  it('is 422 file-rejected for a file the scan rejected', async () => {
    const file = await storedFile(await samplePng(64, 64), 'image/png');
    await setStatus(owner, file.id, 'rejected');
    expectProblem(await processFile(file.id, rotate), 422, 'file-rejected');
  });

  it('is 422 processing-failed at once for a file that is not an image, bytes sharp cannot read, and a crop outside the image', async () => {
    const document = await storedFile(Buffer.from('just some text'), 'text/plain');
    const notReally = await storedFile(Buffer.from('not a PNG at all, whatever the type says'), 'image/png');
    const small = await storedFile(await samplePng(100, 80), 'image/png');

    expect(expectProblem(await processFile(document.id, rotate), 422, 'processing-failed').detail).toContain('not an image');
    expectProblem(await processFile(notReally.id, rotate), 422, 'processing-failed');
    // After the quarter turn the image is 80×100: a crop 90 wide no longer fits.
    const misfit = await processFile(small.id, { operations: [{ rotate: { degrees: 90 } }, { crop: { x: 0, y: 0, width: 90, height: 50 } }] });
    expect(expectProblem(misfit, 422, 'processing-failed').detail).toContain('operation 2');
    // Nothing was recorded for a refused request.
    expect((await read(gateway, `/files/${small.id}?meta=1`, account.accessToken)).body).not.toHaveProperty('processing');
  });

  it('needs files.write: a member without it is 403', async () => {
    const file = await storedFile(await samplePng(64, 64), 'image/png');
    const member = await addMember(gateway, owner, account.tenant.id, 'member');
    expectProblem(await processFile(file.id, rotate, member.token), 403, 'forbidden');
  });

  it('serves the job only to its tenant: another tenant\'s GET /v1/jobs/{jobId} is 404 not-found', async () => {
    const file = await storedFile(await samplePng(64, 64), 'image/png');
    const accepted = await processFile(file.id, rotate);
    expect(accepted.status).toBe(202);
    expectProblem(await read(gateway, `/jobs/${accepted.body.jobId}`, stranger.accessToken), 404, 'not-found');
    await finishedJob(accepted.body.jobId);
  });
});
