import { createFileScanActivities } from '../../../activities/files/scan.activities';
import { config } from '../../../common/config';
import { createLogger } from '../../../common/logger';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { servedInline } from '../../../services/files/content-disposition';
import { createClamdScanner } from '../../../services/files/scanner';
import { appUrl } from '../../helpers/db';
import { read, upload, uploadParts, type FileObject } from '../../helpers/files';
import { useFilesApiStack } from '../../helpers/files-api';
import { samplePng } from '../../helpers/files-scan';
import { waitFor } from '../../helpers/http';
import { connectDevServer, createTestWorker, type DevServer } from '../../helpers/temporal';

/**
 * Active content behind presigned URLs (docs/decisions/files.md, "Active content is served as an
 * attachment"; docs/security.md, V5.3 / V13): an SVG holding a <script>, uploaded through the real
 * gateway and passed by the real ClamAV scan, is answered by the object store as an attachment from
 * every URL the API hands out, so opening the link never runs the script in the store's origin. A
 * raster image stays inline. The store answers the response-* overrides the URL signs.
 */
jest.setTimeout(120_000);

const stack = useFilesApiStack('files-active-content-test');
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(document.domain)</script><rect width="10" height="10"/></svg>');

let server: DevServer;
let app: DatabasePool;
let svg: FileObject;
let image: FileObject;

beforeAll(async () => {
  server = await connectDevServer();
  app = await createDbPool(appUrl(), { maxPoolSize: 4, name: 'files-active-content-test-app' });
  const worker = await createTestWorker(server, {
    taskQueue: stack.gateway.config.files.taskQueue,
    activities: createFileScanActivities({
      appPool: app, objectStore: stack.store, scanner: createClamdScanner(config().clamav),
      logger: createLogger('files-active-content-test', 'silent'),
    }),
  });
  // A worker runs once: both files are scanned in the one run.
  await worker.runUntil(async () => {
    svg = await scannedUpload(SVG, 'image/svg+xml', 'logo "x".svg');
    image = await scannedUpload(await samplePng(16, 16), 'image/png', 'chart.png');
  });
});

afterAll(async () => {
  await server?.close();
  await app?.end();
});

const statusOf = async (id: string) => (await stack.owner.oneFirst(sql.unsafe`SELECT status FROM files WHERE id = ${id}`)) as string;

/** Uploads `bytes` as `mimeType` and lets the real scan make it available. */
async function scannedUpload(bytes: Buffer, mimeType: string, name: string): Promise<FileObject> {
  const uploaded = await upload(stack.gateway, stack.account.accessToken, uploadParts(bytes, { bucket: 'assets', mimeType }, name));
  expect(uploaded.status).toBe(201);
  await waitFor(`${name} available`, async () => (await statusOf(uploaded.body.id)) === 'available', 60_000, 250);
  return uploaded.body;
}

/** Every presigned URL of the content the API answers: the redirect, GET /files/:id/url, and the file object's url. */
async function contentUrlsOf(id: string): Promise<string[]> {
  const token = stack.account.accessToken;
  const redirect = await read(stack.gateway, `/files/${id}`, token);
  expect(redirect.status).toBe(302);
  const signed = await read<{ url: string }>(stack.gateway, `/files/${id}/url?ttlSeconds=60`, token);
  const meta = await read(stack.gateway, `/files/${id}?meta=1`, token);
  return [redirect.headers.get('location')!, signed.body.url, meta.body.url!];
}

describe('presigned URLs of uploaded content', () => {
  it('answer an SVG that holds a script as an attachment named as uploaded, with its own type', async () => {
    for (const url of await contentUrlsOf(svg.id)) {
      const fetched = await fetch(url);
      expect({
        status: fetched.status, type: fetched.headers.get('content-type'), disposition: fetched.headers.get('content-disposition'),
      }).toEqual({ status: 200, type: 'image/svg+xml', disposition: 'attachment; filename="logo _x_.svg"; filename*=UTF-8\'\'logo%20%22x%22.svg' });
      expect(Buffer.from(await fetched.arrayBuffer()).equals(SVG)).toBe(true);
    }
  });

  it('answer a PNG inline, as a browser shows it in place', async () => {
    for (const url of await contentUrlsOf(image.id)) {
      const fetched = await fetch(url);
      expect({ status: fetched.status, type: fetched.headers.get('content-type'), disposition: fetched.headers.get('content-disposition') })
        .toEqual({ status: 200, type: 'image/png', disposition: null });
      await fetched.arrayBuffer();
    }
  });
});

describe('which types are shown in place', () => {
  it.each([
    ['image/png', true], ['IMAGE/JPEG', true], ['image/webp', true], ['application/pdf; version=1.7', true],
    ['image/svg+xml', false], ['text/html', false], ['application/xhtml+xml', false], ['text/xml', false],
    ['application/xml', false], ['text/plain', false], ['application/octet-stream', false], ['image/x-unknown', false],
  ])('%s inline: %s', (mimeType, inline) => {
    expect(servedInline(mimeType)).toBe(inline);
  });
});
