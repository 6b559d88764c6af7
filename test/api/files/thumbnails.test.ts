import sharp from 'sharp';
import { sql } from '../../../db/pool';
import { thumbnailKeyOf } from '../../../services/files/object-keys';
import {
  keysUnder, makeAvailable, read, setStatus, upload, uploadParts, type FileObject, type Problem,
} from '../../helpers/files';
import { samplePng } from '../../helpers/files-scan';
import { registerAccount } from '../../helpers/identity';
import { expectProblem as problemOf, useFilesApiStack } from '../../helpers/files-api';

/**
 * GET /files/:id/thumbnail/:preset (docs/reference/files.md#rule-15; issue 17) through the real gateway and object
 * store: a preset is rendered from the original the first time it is asked for, stored, recorded on
 * the file and kept. Files are uploaded through the API and made available directly (the object at
 * its final key, the row available), as test/api/files/read.test.ts does. How often a preset is
 * rendered is counted on the gateway's own object store client: one read of the original and one
 * write of the thumbnail per rendering.
 */
jest.setTimeout(60_000);

const stack = useFilesApiStack('files-thumbnails-test');
let photoBytes: Buffer;
let pngBytes: Buffer;

const PRESETS: Array<[preset: string, width: number, height: number]> = [
  ['icon_32', 32, 32], ['avatar_64', 64, 64], ['card_300', 300, 200], ['preview_600', 600, 400], ['full_1200', 1200, 900],
];

beforeAll(async () => {
  [photoBytes, pngBytes] = await Promise.all([
    sharp({ create: { width: 2000, height: 1500, channels: 3, background: { r: 200, g: 90, b: 30 } } }).jpeg().toBuffer(),
    samplePng(1600, 1200),
  ]);
});

afterAll(() => {
  jest.restoreAllMocks();
});

/** A file uploaded by `account` and made available with `bytes` as its stored object. */
async function availableFile(bytes: Buffer, mimeType: string, filename: string): Promise<FileObject> {
  const file = (await upload(stack.gateway, stack.account.accessToken, uploadParts(bytes, { bucket: 'assets', mimeType }, filename))).body;
  await makeAvailable(stack.owner, stack.store, file, bytes);
  return file;
}

function thumbnail(file: Pick<FileObject, 'id'>, preset: string, token = stack.account.accessToken) {
  return read(stack.gateway, `/files/${file.id}/thumbnail/${preset}`, token);
}

const expectProblem = (response: { status: number; body: unknown }, status: number, type: string): Problem => problemOf(stack.gateway, response, status, type);

async function recordedThumbnails(fileId: string): Promise<Record<string, string>> {
  return stack.owner.oneFirst(sql.unsafe`SELECT thumbnails FROM files WHERE id = ${fileId}`) as Promise<Record<string, string>>;
}

/** Counts, from now on, the gateway's reads of the file's original and writes of its thumbnails. */
function countStoreCalls(file: FileObject): { originalReads: () => number; thumbnailWrites: () => number } {
  const s3 = stack.gateway.runtime.files.objectStore.s3;
  const getObject = jest.spyOn(s3, 'getObject');
  const putObject = jest.spyOn(s3, 'putObject');
  const original = `${file.tenantId}/${file.bucket}/${file.id}/original`;
  const thumbnails = `${file.tenantId}/${file.bucket}/${file.id}/thumbnails/`;
  return {
    originalReads: () => getObject.mock.calls.filter((call) => call[1] === original).length,
    thumbnailWrites: () => putObject.mock.calls.filter((call) => String(call[1]).startsWith(thumbnails)).length,
  };
}

afterEach(() => jest.restoreAllMocks());

describe('GET /files/:id/thumbnail/:preset', () => {
  it('redirects (302) to a presigned URL of each preset of a JPEG, rendered to its size, and records it on the file', async () => {
    const photo = await availableFile(photoBytes, 'image/jpeg', 'photo.jpg');
    for (const [preset, width, height] of PRESETS) {
      const response = await thumbnail(photo, preset);
      expect(response.status).toBe(302);
      expect(response.headers.get('cache-control')).toBe('private, no-store');
      const location = new URL(response.headers.get('location')!);
      expect(location.host).toBe(`${stack.gateway.config.s3.endPoint}:${stack.gateway.config.s3.port}`);
      expect(location.pathname).toBe(`/${stack.gateway.config.s3.bucket}/${thumbnailKeyOf(photo.tenantId, 'assets', photo.id, preset)}`);
      expect(location.searchParams.get('X-Amz-Expires')).toBe('300');

      const fetched = await fetch(location);
      expect(fetched.status).toBe(200);
      expect(fetched.headers.get('content-type')).toBe('image/webp');
      const { format, width: fetchedWidth, height: fetchedHeight } = await sharp(Buffer.from(await fetched.arrayBuffer())).metadata();
      expect({ preset, format, width: fetchedWidth, height: fetchedHeight }).toEqual({ preset, format: 'webp', width, height });
    }
    expect(await recordedThumbnails(photo.id)).toEqual(
      Object.fromEntries(PRESETS.map(([preset]) => [preset, thumbnailKeyOf(photo.tenantId, 'assets', photo.id, preset)])),
    );
  });

  it('renders a PNG too; full_1200 of an image narrower than 1200 keeps its size', async () => {
    const logo = await availableFile(await samplePng(800, 600), 'image/png', 'logo.png');
    for (const [preset, width, height] of [['card_300', 300, 200], ['full_1200', 800, 600]] as const) {
      const response = await thumbnail(logo, preset);
      expect(response.status).toBe(302);
      const image = Buffer.from(await (await fetch(response.headers.get('location')!)).arrayBuffer());
      expect(await sharp(image).metadata()).toMatchObject({ format: 'webp', width, height });
    }
  });

  it('renders a preset once: a second request signs the stored thumbnail again', async () => {
    const photo = await availableFile(pngBytes, 'image/png', 'again.png');
    const calls = countStoreCalls(photo);
    const first = await thumbnail(photo, 'preview_600');
    expect(first.status).toBe(302);
    const key = thumbnailKeyOf(photo.tenantId, 'assets', photo.id, 'preview_600');
    const stored = await stack.store.s3.statObject(stack.store.bucket, key);
    expect({ reads: calls.originalReads(), writes: calls.thumbnailWrites() }).toEqual({ reads: 1, writes: 1 });

    const second = await thumbnail(photo, 'preview_600');
    expect(second.status).toBe(302);
    expect(new URL(second.headers.get('location')!).pathname).toBe(new URL(first.headers.get('location')!).pathname);
    expect({ reads: calls.originalReads(), writes: calls.thumbnailWrites() }).toEqual({ reads: 1, writes: 1 });
    const after = await stack.store.s3.statObject(stack.store.bucket, key);
    expect({ lastModified: after.lastModified, etag: after.etag }).toEqual({ lastModified: stored.lastModified, etag: stored.etag });
  });

  it('shares one rendering among 10 concurrent requests: one object, one read of the original', async () => {
    const photo = await availableFile(photoBytes, 'image/jpeg', 'crowd.jpg');
    const calls = countStoreCalls(photo);
    const responses = await Promise.all(Array.from({ length: 10 }, () => thumbnail(photo, 'full_1200')));
    const key = thumbnailKeyOf(photo.tenantId, 'assets', photo.id, 'full_1200');
    for (const response of responses) {
      expect(response.status).toBe(302);
      expect(new URL(response.headers.get('location')!).pathname).toBe(`/${stack.gateway.config.s3.bucket}/${key}`);
    }
    expect({ reads: calls.originalReads(), writes: calls.thumbnailWrites() }).toEqual({ reads: 1, writes: 1 });
    expect(await keysUnder(stack.store, `${photo.tenantId}/assets/${photo.id}/thumbnails/`)).toEqual([key]);
    expect(await recordedThumbnails(photo.id)).toEqual({ full_1200: key });
  });

  it('answers 404 preset-not-found for an unknown preset, with the presets there are', async () => {
    const photo = await availableFile(pngBytes, 'image/png', 'presets.png');
    for (const preset of ['icon_64', 'FULL_1200', 'toString', 'original']) {
      const problem = expectProblem(await thumbnail(photo, preset), 404, 'preset-not-found');
      expect(problem.presets).toEqual(['icon_32', 'avatar_64', 'card_300', 'preview_600', 'full_1200']);
    }
  });

  it('answers 404 preset-not-found for a file that is not an image, and stores nothing', async () => {
    const report = await availableFile(Buffer.from('%PDF-1.7 a report'), 'application/pdf', 'report.pdf');
    const problem = expectProblem(await thumbnail(report, 'icon_32'), 404, 'preset-not-found');
    expect(problem.detail).toContain('not an image');
    expect(await keysUnder(stack.store, `${report.tenantId}/assets/${report.id}/thumbnails/`)).toEqual([]);
  });

  it('answers 404 file-not-found for another tenant\'s file, an unknown id, a file not scanned yet or deleted; 422 file-rejected for a rejected one', async () => {
    const photo = await availableFile(pngBytes, 'image/png', 'private.png');
    expectProblem(await thumbnail(photo, 'icon_32', stack.stranger.accessToken), 404, 'file-not-found');
    expect(await keysUnder(stack.store, `${photo.tenantId}/assets/${photo.id}/thumbnails/`)).toEqual([]);
    expectProblem(await thumbnail({ id: stack.stranger.tenant.id }, 'icon_32'), 404, 'file-not-found');

    const pending = (await upload(stack.gateway, stack.account.accessToken, uploadParts(pngBytes, { bucket: 'assets', mimeType: 'image/png' }))).body;
    expectProblem(await thumbnail(pending, 'icon_32'), 404, 'file-not-found');

    const deleted = await availableFile(pngBytes, 'image/png', 'deleted.png');
    await setStatus(stack.owner, deleted.id, 'deleted');
    expectProblem(await thumbnail(deleted, 'icon_32'), 404, 'file-not-found');

    const rejected = (await upload(stack.gateway, stack.account.accessToken, uploadParts(pngBytes, { bucket: 'assets', mimeType: 'image/png' }))).body;
    await setStatus(stack.owner, rejected.id, 'rejected');
    expectProblem(await thumbnail(rejected, 'icon_32'), 422, 'file-rejected');
  });

  it('answers 422 processing-failed for an image that cannot be decoded, each time, and records nothing', async () => {
    const corrupt = await availableFile(Buffer.concat([pngBytes.subarray(0, 64), Buffer.alloc(512, 7)]), 'image/png', 'corrupt.png');
    for (let attempt = 0; attempt < 2; attempt += 1) {
      expectProblem(await thumbnail(corrupt, 'card_300'), 422, 'processing-failed');
    }
    expect(await keysUnder(stack.store, `${corrupt.tenantId}/assets/${corrupt.id}/thumbnails/`)).toEqual([]);
    expect(await recordedThumbnails(corrupt.id)).toEqual({});
  });

  it('refuses an id that is not a UUID (400) and needs files.read (403)', async () => {
    expectProblem(await thumbnail({ id: 'logo.png' }, 'icon_32'), 400, 'validation-error');
    const writer = await registerAccount(stack.gateway);
    await stack.owner.query(sql.unsafe`UPDATE roles SET permissions = '{files.write}' WHERE tenant_id = ${writer.tenant.id} AND name = 'owner'`);
    const photo = await availableFile(pngBytes, 'image/png', 'forbidden.png');
    expectProblem(await thumbnail(photo, 'icon_32', writer.accessToken), 403, 'forbidden');
  });
});
