import { randomBytes } from 'node:crypto';
import { sql } from '../../../db/pool';
import {
  makeAvailable, read, setStatus, upload, uploadParts, type FileObject, type Problem,
} from '../../helpers/files';
import { samplePng } from '../../helpers/files-scan';
import { waitFor } from '../../helpers/http';
import { registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { expectProblem as problemOf, useFilesApiStack } from '../../helpers/files-api';

/**
 * Reading files (docs/reference/files.md, rules 11 to 13 and 22; issue 17): GET /files/:id (302, ?download=1, ?meta=1),
 * GET /files/:id/url and GET /files, through the real gateway and object store. Files are uploaded
 * through the API; what a clean scan does (the object at its final key, the row available) is
 * written directly, since the scan workflow is test/workflows/file-scan.workflow.test.ts's subject.
 */
jest.setTimeout(60_000);

const stack = useFilesApiStack('files-read-test');
/** An available PNG with a thumbnail, and its bytes. */
let image: FileObject;
let imageBytes: Buffer;
/** An available document whose name is not ASCII. */
let report: FileObject;
const reportBytes = randomBytes(3000);

interface Page { data: FileObject[]; next_page_token?: string }
interface CursorPage { data: FileObject[]; meta: { cursor: string | null; hasMore: boolean } }

beforeAll(async () => {
  imageBytes = await samplePng(40, 30);
  image = (await upload(stack.gateway, stack.account.accessToken, uploadParts(imageBytes, { bucket: 'assets', meta: '{"alt":"logo"}' }, 'logo.png'))).body;
  await makeAvailable(stack.owner, stack.store, image, imageBytes, { icon_32: Buffer.from('thumbnail bytes') });
  report = (await upload(stack.gateway, stack.account.accessToken, uploadParts(reportBytes, { mimeType: 'application/pdf' }, 'Résumé "final".pdf'))).body;
  // Stored as the type known when its upload started; the file's own type is what is answered.
  await makeAvailable(stack.owner, stack.store, report, reportBytes, {}, 'application/octet-stream');
});

const expectProblem = (response: { status: number; body: unknown }, status: number, type: string): Problem => problemOf(stack.gateway, response, status, type);

describe('GET /files/:id', () => {
  it('redirects (302) to a presigned URL of the stored object on the object store\'s host, which serves the bytes', async () => {
    const response = await read(stack.gateway, `/files/${image.id}`, stack.account.accessToken);
    expect(response.status).toBe(302);
    expect(response.headers.get('cache-control')).toBe('private, no-store');
    const location = new URL(response.headers.get('location')!);
    expect(location.host).toBe(`${stack.gateway.config.s3.endPoint}:${stack.gateway.config.s3.port}`);
    expect(location.pathname).toBe(`/${stack.gateway.config.s3.bucket}/${stack.account.tenant.id}/assets/${image.id}/original`);
    expect(location.searchParams.get('X-Amz-Expires')).toBe('300');

    const fetched = await fetch(location);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await fetched.arrayBuffer())).toEqual(imageBytes);

    const document = await fetch((await read(stack.gateway, `/files/${report.id}`, stack.account.accessToken)).headers.get('location')!);
    expect(document.headers.get('content-type')).toBe('application/pdf');
  });

  it('streams the bytes with ?download=1, as an attachment named as uploaded (RFC 6266)', async () => {
    const response = await fetch(`${stack.gateway.baseUrl}/v1/files/${report.id}?download=1`, { headers: { authorization: `Bearer ${stack.account.accessToken}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-length')).toBe(String(reportBytes.length));
    expect(response.headers.get('content-disposition'))
      .toBe('attachment; filename="R_sum_ _final_.pdf"; filename*=UTF-8\'\'R%C3%A9sum%C3%A9%20%22final%22.pdf');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await response.arrayBuffer())).toEqual(reportBytes);
  });

  it('answers the file object with its meta and thumbnails with ?meta=1', async () => {
    const response = await read(stack.gateway, `/files/${image.id}?meta=1`, stack.account.accessToken);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...image, status: 'available', url: expect.stringContaining(`/${stack.account.tenant.id}/assets/${image.id}/original?`),
      meta: { alt: 'logo' }, thumbnails: { icon_32: expect.stringContaining(`/${image.id}/thumbnails/icon_32.webp?`) },
    });
    const thumbnail = await fetch(response.body.thumbnails!.icon_32);
    expect(await thumbnail.text()).toBe('thumbnail bytes');
    expect(await (await fetch(response.body.url!)).arrayBuffer()).toEqual(new Uint8Array(imageBytes).buffer);
  });

  it('answers 404 file-not-found for another tenant\'s file, an unknown id, a deleted file; 422 file-rejected for a rejected one', async () => {
    for (const query of ['', '?download=1', '?meta=1']) {
      expectProblem(await read(stack.gateway, `/files/${image.id}${query}`, stack.stranger.accessToken), 404, 'file-not-found');
    }
    expectProblem(await read(stack.gateway, `/files/${stack.stranger.tenant.id}`, stack.account.accessToken), 404, 'file-not-found');

    const deleted = (await upload(stack.gateway, stack.account.accessToken, uploadParts(randomBytes(10)))).body;
    await makeAvailable(stack.owner, stack.store, deleted, Buffer.from('gone'));
    await setStatus(stack.owner, deleted.id, 'deleted');
    expectProblem(await read(stack.gateway, `/files/${deleted.id}`, stack.account.accessToken), 404, 'file-not-found');

    const rejected = (await upload(stack.gateway, stack.account.accessToken, uploadParts(randomBytes(10)))).body;
    await setStatus(stack.owner, rejected.id, 'rejected');
    for (const path of [`/files/${rejected.id}`, `/files/${rejected.id}?download=1`, `/files/${rejected.id}/url`]) {
      expectProblem(await read(stack.gateway, path, stack.account.accessToken), 422, 'file-rejected');
    }
  });

  it('refuses download and meta together, and an id that is not a UUID: 400 validation-error', async () => {
    expectProblem(await read(stack.gateway, `/files/${image.id}?download=1&meta=1`, stack.account.accessToken), 400, 'validation-error');
    expectProblem(await read(stack.gateway, '/files/logo.png', stack.account.accessToken), 400, 'validation-error');
  });

  it('needs files.read', async () => {
    const writer = await registerAccount(stack.gateway);
    await stack.owner.query(sql.unsafe`UPDATE roles SET permissions = '{files.write}' WHERE tenant_id = ${writer.tenant.id} AND name = 'owner'`);
    expectProblem(await read(stack.gateway, `/files/${image.id}`, writer.accessToken), 403, 'forbidden');
    expectProblem(await read(stack.gateway, '/files', writer.accessToken), 403, 'forbidden');
  });
});

describe('GET /files/:id/url', () => {
  it('answers a presigned URL valid ttlSeconds (default 300) with its expiry', async () => {
    const before = Date.now();
    const standard = await read<{ url: string; expiresAt: string }>(stack.gateway, `/files/${image.id}/url`, stack.account.accessToken);
    expect(standard.status).toBe(200);
    expect(new URL(standard.body.url).searchParams.get('X-Amz-Expires')).toBe('300');
    const expiresAt = Date.parse(standard.body.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 300_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 300_000);

    const day = await read<{ url: string }>(stack.gateway, `/files/${image.id}/url?ttlSeconds=86400`, stack.account.accessToken);
    expect(new URL(day.body.url).searchParams.get('X-Amz-Expires')).toBe('86400');
  });

  it('hands out a URL that stops working after its TTL, and not before expiresAt (less the signature\'s 1 s rounding)', async () => {
    // The signature's X-Amz-Date is truncated to the second, so the URL lives between ttl - 1 s and
    // ttl from the answer: a 10 s TTL leaves room to use it at once on a slow machine.
    const { body } = await read<{ url: string; expiresAt: string }>(stack.gateway, `/files/${report.id}/url?ttlSeconds=10`, stack.account.accessToken);
    const expiresAt = Date.parse(body.expiresAt);
    const first = await fetch(body.url);
    expect(first.status).toBe(200);
    await first.arrayBuffer();

    let refused = { status: 0, at: 0 };
    await waitFor('the presigned URL to stop working', async () => {
      const response = await fetch(body.url);
      await response.arrayBuffer();
      refused = { status: response.status, at: Date.now() };
      return response.status !== 200;
    }, 40_000, 250);
    expect(refused.status).toBe(403);
    // A 403 received at refused.at was decided no later than that, so this shows it never came early.
    expect(refused.at).toBeGreaterThanOrEqual(expiresAt - 1000);
  });

  it('refuses a TTL outside 1..86400 (400 validation-error), and another tenant\'s file (404)', async () => {
    for (const ttl of ['0', '86401', '-5', '1.5', 'soon']) {
      const problem = expectProblem(await read(stack.gateway, `/files/${image.id}/url?ttlSeconds=${ttl}`, stack.account.accessToken), 400, 'validation-error');
      expect(problem.errors?.[0].field).toBe('ttlSeconds');
    }
    expectProblem(await read(stack.gateway, `/files/${image.id}/url`, stack.stranger.accessToken), 404, 'file-not-found');
  });
});

describe('GET /files', () => {
  let lister: RegisteredAccount;
  /** Newest first. */
  let files: FileObject[];

  beforeAll(async () => {
    lister = await registerAccount(stack.gateway);
    const uploaded: FileObject[] = [];
    for (const [bucket, name] of [['assets', 'a.bin'], ['documents', 'b.bin'], ['assets', 'c.bin'], ['documents', 'd.bin'], ['assets', 'e.bin']]) {
      uploaded.push((await upload(stack.gateway, lister.accessToken, uploadParts(randomBytes(16), { bucket }, name))).body);
    }
    await makeAvailable(stack.owner, stack.store, uploaded[1], Buffer.from('b'));
    uploaded[1] = { ...uploaded[1], status: 'available' };
    files = uploaded.reverse();
  });

  const ids = (page: { data: FileObject[] }) => page.data.map((file) => file.id);

  it('lists the tenant\'s files newest first, 20 by default, with url only for available ones', async () => {
    const { status, body } = await read<Page>(stack.gateway, '/files', lister.accessToken);
    expect(status).toBe(200);
    expect(ids(body)).toEqual(files.map((file) => file.id));
    expect(body.next_page_token).toBeUndefined();
    expect(body.data.map((file) => [file.status, file.url === null])).toEqual(
      files.map((file) => [file.status, file.status !== 'available']));
  });

  it('filters by bucket, status and uploadedBy', async () => {
    const assets = await read<Page>(stack.gateway, '/files?bucket=assets', lister.accessToken);
    expect(ids(assets.body)).toEqual(files.filter((file) => file.bucket === 'assets').map((file) => file.id));
    const available = await read<Page>(stack.gateway, '/files?status=available', lister.accessToken);
    expect(ids(available.body)).toEqual([files[3].id]);
    const pendingDocuments = await read<Page>(stack.gateway, '/files?bucket=documents&status=pending_scan', lister.accessToken);
    expect(ids(pendingDocuments.body)).toEqual([files[1].id]);
    const mine = await read<Page>(stack.gateway, `/files?uploadedBy=${lister.user.id}`, lister.accessToken);
    expect(ids(mine.body)).toHaveLength(5);
    const others = await read<Page>(stack.gateway, `/files?uploadedBy=${stack.account.user.id}`, lister.accessToken);
    expect(others.body.data).toEqual([]);
  });

  it('pages with page_size/page_token and with limit/cursor', async () => {
    const first = await read<Page>(stack.gateway, '/files?page_size=2', lister.accessToken);
    expect(ids(first.body)).toEqual(files.slice(0, 2).map((file) => file.id));
    const second = await read<Page>(stack.gateway, `/files?page_size=2&page_token=${first.body.next_page_token}`, lister.accessToken);
    expect(ids(second.body)).toEqual(files.slice(2, 4).map((file) => file.id));
    const third = await read<Page>(stack.gateway, `/files?page_size=2&page_token=${second.body.next_page_token}`, lister.accessToken);
    expect(ids(third.body)).toEqual([files[4].id]);
    expect(third.body.next_page_token).toBeUndefined();

    const cursorFirst = await read<CursorPage>(stack.gateway, '/files?limit=3', lister.accessToken);
    expect(cursorFirst.body.meta.hasMore).toBe(true);
    const cursorSecond = await read<CursorPage>(stack.gateway, `/files?limit=3&cursor=${cursorFirst.body.meta.cursor}`, lister.accessToken);
    expect([...ids(cursorFirst.body), ...ids(cursorSecond.body)]).toEqual(files.map((file) => file.id));
    expect(cursorSecond.body.meta).toEqual({ cursor: null, hasMore: false });
  });

  it('refuses a bucket that does not exist (400 bucket-invalid), mixed page pairs and a forged token (400)', async () => {
    expectProblem(await read(stack.gateway, '/files?bucket=photos', lister.accessToken), 400, 'bucket-invalid');
    expectProblem(await read(stack.gateway, '/files?page_size=2&limit=2', lister.accessToken), 400, 'validation-error');
    expectProblem(await read(stack.gateway, '/files?status=purged', lister.accessToken), 400, 'validation-error');
    expectProblem(await read(stack.gateway, `/files?page_token=${Buffer.from('{"id":1}').toString('base64url')}`, lister.accessToken),
      400, 'validation-error');
  });

  it('never lists another tenant\'s files', async () => {
    const { body } = await read<Page>(stack.gateway, '/files?page_size=100', stack.stranger.accessToken);
    expect(body.data).toEqual([]);
  });
});
