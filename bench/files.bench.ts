import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { createObjectStore, removeObjects, type ObjectStore } from '../common/object-store';
import { createDbPool, sql, type DatabasePool } from '../db/pool';
import { createClamdScanner, type VirusScanner } from '../services/files/scanner';
import { UPLOAD_THUMBNAILS } from '../services/files/thumbnails';
import { promoteDirectly } from './files/direct-work';
import {
  apiClient, cpuSecondsOf, httpCaller, machineTicks, measure, percent, printPhases, ratePerSecond as rate, recordedTemporalPid, startBenchGateway,
  startChildServer, type Phase,
} from './lib/load';
import { atLeast, below, startResults } from './lib/results';

/**
 * The files service's performance (issue 17), side by side in one run on this machine:
 * 1. Upload → available for a 1 MB PNG (scan, copy to its final key, the two upload thumbnails) at
 *    `--concurrency` uploads in flight, through a child gateway and the platform's running worker,
 *    against the ceiling of the same work done directly in this process (S3 put, clamd INSTREAM,
 *    S3 copy, two sharp resizes stored back, staging removed). Target: at least 60 % of the ceiling.
 *    Beside them the floor (bench/files/floor-server.ts): the same upload with only the structure
 *    the issue asks for (a multipart POST streamed to staging, one workflow per file), none of the
 *    platform's bookkeeping. Each side reports the machine's CPU and the Temporal server's per upload.
 * 2. 50 MB document uploads: the gateway's resident memory, sampled every 10 ms, grows by less
 *    than 30 MB per upload (the body is streamed to the store, not buffered). Three in a row: the
 *    first also grows the heap to the working size of the path, which later uploads reuse.
 * 3. Thumbnails on demand of 2000×1500 JPEGs (the three presets an upload does not make), one
 *    client: p99 under 150 ms.
 * 4. A page of the file list, GET /files?limit=20, one client: every file on it carries a presigned
 *    URL, so a page signs 20 (no target of its own; the figure minio's signing is weighed by).
 *
 *   npm run bench:files -- [--concurrency 8] [--uploads 160] [--photos 30]
 *
 * Every image is distinct (clamd keeps a cache of clean content, which would flatter a repeated
 * one), and each side gets its own. The gateway runs with BILLING_ENABLED=false: a bench tenant's
 * plan would cap its storage at 100 MB; the usage counter is still written per upload.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string', default: '8' }, uploads: { type: 'string', default: '160' }, photos: { type: 'string', default: '30' },
    },
  });
  const concurrency = Number(values.concurrency);
  const uploads = Number(values.uploads);
  const photos = Number(values.photos);

  const cfg = config();
  const results = startResults('files', values);
  // The flags the platform's gateway runs with (scripts/infra/app-up.sh): its young generation, and the
  // collection a streamed upload asks for per part (common/object-parts.ts).
  const gateway = await startBenchGateway({ BILLING_ENABLED: 'false', NODE_OPTIONS: '--max-semi-space-size=4 --expose-gc' });
  const owner = await createDbPool(cfg.db.ownerUrl, { maxPoolSize: 2, name: 'bench-files-owner' });
  const store = createObjectStore(cfg.s3);
  const scanner = createClamdScanner(cfg.clamav);
  const watcher = new AvailabilityWatcher(owner);
  const floor = await startChildServer('bench/files/floor-server.ts', 'files floor listening');
  const temporalPid = recordedTemporalPid();
  // What the bench stored, removed when it ends (every run stores about half a GB).
  const stored = { files: [] as string[], objects: [] as string[] };
  let removeStoredFiles: (() => Promise<void>) | undefined;
  try {
    const call = apiClient(gateway.baseUrl);
    const account = await call('POST', '/auth/register', { email: `bench.files.${newId()}@example.test`, password: 'bench-passphrase-of-some-length' });
    const token = String(account.accessToken);
    const tenantId = (account.tenant as { id: string }).id;
    const client = uploadClient(gateway.baseUrl, token, stored.files);
    removeStoredFiles = () => removeStored(store, client, stored);

    process.stdout.write(`distinct 1 MB PNGs: rendering ${3 * uploads + 3 * concurrency}…`);
    const pngs = await distinctImages(3 * uploads + 3 * concurrency, noisePng);
    console.log(` ${(pngs[0].length / 1024 / 1024).toFixed(2)} MB each`);
    const setOf = (side: number) => pngs.slice(3 * concurrency + side * uploads, 3 * concurrency + (side + 1) * uploads);
    const warmOf = (side: number) => pngs.slice(side * concurrency, (side + 1) * concurrency);
    const forms = (set: Buffer[]) => Promise.all(set.map((png) => client.form(png, 'image.png', 'assets')));
    const through = (set: MultipartBody[]) => (index: () => number) => async () => {
      const file = await client.upload(set[index()]);
      await watcher.available(file.id);
    };
    const floorUpload = floorClient(floor.baseUrl, tenantId);
    const floored = (set: MultipartBody[]) => (index: () => number) => async () => {
      stored.objects.push(...await floorUpload(set[index()]));
    };
    const direct = (set: Buffer[]) => (index: () => number) => async () => {
      stored.objects.push(...await directUploadToAvailable(store, scanner, tenantId, set[index()]));
    };
    const counter = () => { let next = 0; return () => next++; };

    heading(`1. upload → available for a 1 MB PNG, ${concurrency} in flight, ${uploads} uploads per side`);
    const costs: string[] = [];
    // The machine's CPU over a side and the Temporal server's, per upload: both cores are busy on every
    // side, so the rates' ratio follows the CPU each side spends per upload.
    const side = async (name: string, step: () => Promise<void>, pid?: number): Promise<Phase> => {
      const [machine, server] = [machineTicks().busy / 100, temporalPid ? cpuSecondsOf(temporalPid) : 0];
      const phase = await measure(name, concurrency, 600, uploads, step, pid);
      const perUpload = (seconds: number) => ((seconds * 1000) / phase.count).toFixed(1);
      costs.push(`| ${name} | ${perUpload(machineTicks().busy / 100 - machine)} | ${temporalPid ? perUpload(cpuSecondsOf(temporalPid) - server) : '-'} |`);
      return phase;
    };
    await measure('warm-up', concurrency, 600, concurrency, through(await forms(warmOf(0)))(counter()));
    await measure('warm-up', concurrency, 600, concurrency, floored(await forms(warmOf(1)))(counter()));
    await measure('warm-up', concurrency, 600, concurrency, direct(warmOf(2))(counter()));
    const ceiling = await side('directly in one process (put, INSTREAM, copy, 2 resizes, put ×2)', direct(setOf(2))(counter()));
    const least = await side('floor: POST of the form → one workflow per file, no bookkeeping', floored(await forms(setOf(1)))(counter()), floor.child.pid);
    const platform = await side('POST /files/upload → available with icon_32 and card_300', through(await forms(setOf(0)))(counter()), gateway.child.pid);
    printPhases([ceiling, least, platform]);
    console.log('\n| side | the machine\'s CPU ms per upload | the Temporal server\'s |\n|---|---|---|');
    costs.forEach((line) => console.log(line));
    console.log(`\nfloor / ceiling: ${percent(rate(least), rate(ceiling))}; platform / floor: ${percent(rate(platform), rate(least))}`);
    console.log(`platform / ceiling: ${percent(rate(platform), rate(ceiling))} (target ≥ 60 %)`);

    heading('2. 50 MB document uploads, one after another: the gateway\'s resident memory');
    const document = Buffer.alloc(50_000_000);
    for (let offset = 0; offset < document.length; offset += 65_536) document.writeUInt32BE(offset, offset);
    const growths: number[] = [];
    const documents: string[] = [];
    const documentForm = await client.form(document, 'report.bin', 'documents');
    for (let round = 1; round <= 3; round += 1) {
      const rss = await sampleRss(gateway.child.pid!, async () => documents.push((await client.upload(documentForm)).id));
      growths.push(rss.peak - rss.before);
      console.log(`upload ${round}: RSS before ${mb(rss.before)} MB, peak during it ${mb(rss.peak)} MB: growth ${mb(rss.peak - rss.before)} MB`);
    }
    // The first large upload also grows the heap to its working size for the path (and the allocator keeps
    // what it took); a buffered body would grow the process by the file's size at every upload.
    console.log(`growth per upload once the gateway has served one: at most ${mb(Math.max(...growths.slice(1)))} MB (target < 30 MB); `
      + `the first: ${mb(growths[0])} MB`);

    // Their scans (150 MB through clamd) would otherwise run beside phase 3.
    await Promise.all(documents.map((id) => watcher.available(id)));

    heading(`3. thumbnails on demand of ${photos} 2000×1500 JPEGs, one client`);
    const jpegs = await distinctImages(photos, noiseJpeg);
    console.log(`JPEGs of ${(jpegs[0].length / 1024 / 1024).toFixed(2)} MB; uploading them`);
    const ids = await Promise.all(jpegs.map(async (jpeg) => {
      const file = await client.upload(await client.form(jpeg, 'photo.jpg', 'assets'));
      await watcher.available(file.id);
      return file.id;
    }));
    // Every preset of every photo once, one after another: each is rendered on demand, none is cached yet.
    const renders = ['avatar_64', 'preview_600', 'full_1200'].flatMap((preset) => ids.map((id) => () => client.thumbnail(id, preset)));
    let next = 0;
    const thumbnails = await measure('thumbnails on demand', 1, 600, renders.length, () => renders[next++]());
    console.log(`${thumbnails.count} thumbnails rendered on demand: p50 ${thumbnails.p50.toFixed(1)} ms, `
      + `p99 ${thumbnails.p99.toFixed(1)} ms, max ${thumbnails.max!.toFixed(1)} ms (target p99 < 150 ms)`);

    heading(`4. a page of ${LIST_PAGE} files, GET /files?limit=${LIST_PAGE}, one client`);
    await measure('warm-up', 1, 600, 200, () => client.listPage());
    const listPages = await measure('a page of the file list', 1, 600, 2000, () => client.listPage(), gateway.child.pid);
    console.log(`${listPages.count} pages: p50 ${listPages.p50.toFixed(2)} ms, p99 ${listPages.p99.toFixed(2)} ms, `
      + `the gateway's CPU ${listPages.cpuMsPerRequest!.toFixed(2)} ms a page`);
    const warmGrowth = Math.max(...growths.slice(1));
    results.write({ uploads: [ceiling, least, platform], uploadCpu: costs, documentGrowthBytes: growths, thumbnails, listPages }, [
      atLeast('upload → available ≥ 60 % of the same work done directly (issue 17)', rate(platform) / rate(ceiling), 0.6,
        `${percent(rate(platform), rate(ceiling))}, where the issue's structure alone (the floor) reached ${percent(rate(least), rate(ceiling))}`),
      below('a 50 MB upload grows the gateway by < 30 MB (issue 17)', warmGrowth / 1024 / 1024, 30, `at most ${mb(warmGrowth)} MB once warm, ${mb(growths[0])} MB the first`),
      below('thumbnail on demand of a 2000×1500 JPEG p99 < 150 ms (issue 17)', thumbnails.p99, 150, `${thumbnails.p99.toFixed(1)} ms (${thumbnails.count} samples)`),
    ]);
  } finally {
    watcher.stop();
    await removeStoredFiles?.();
    await owner.end();
    floor.child.kill('SIGTERM');
    await new Promise((resolve) => {
      gateway.child.once('exit', resolve);
      gateway.child.kill('SIGTERM');
    });
  }
}

/** The file list's page size the bench reads (every run has uploaded more available files than this). */
const LIST_PAGE = 20;

/** A multipart/form-data body as a browser's FormData encodes it, with its content type (and boundary). */
interface MultipartBody {
  type: string;
  bytes: Buffer;
}

/**
 * Uploads and thumbnail reads of one account, on node:http (httpCaller, bench/lib/load.ts). A body is
 * encoded by undici's FormData before the upload it is for is timed, as the direct side's images are
 * rendered before theirs: the load generator shares the two cores with what it measures, which the
 * direct side, making no requests, does not pay. Every file it uploads is noted in `uploaded`.
 */
function uploadClient(baseUrl: string, token: string, uploaded: string[]) {
  const call = httpCaller(baseUrl);
  const authorization = `Bearer ${token}`;
  return {
    async form(bytes: Buffer, name: string, bucket: string): Promise<MultipartBody> {
      const form = new FormData();
      form.append('bucket', bucket);
      form.append('originalName', name);
      form.append('file', new Blob([bytes]), name);
      const encoded = new Response(form);
      return { type: encoded.headers.get('content-type')!, bytes: Buffer.from(await encoded.arrayBuffer()) };
    },
    async upload({ type, bytes }: MultipartBody): Promise<{ id: string }> {
      const { status, text } = await call('POST', '/v1/files/upload', { authorization, 'content-type': type, 'content-length': bytes.length }, bytes);
      if (status !== 201) throw new Error(`upload answered ${status}: ${text}`);
      const file = JSON.parse(text) as { id: string };
      uploaded.push(file.id);
      return file;
    },
    /** A full page of the account's files, each available (so each carries its presigned URL). */
    async listPage(): Promise<void> {
      const { status, text } = await call('GET', `/v1/files?limit=${LIST_PAGE}&status=available`, { authorization });
      if (status !== 200) throw new Error(`the file list answered ${status}`);
      const page = JSON.parse(text) as { data: { url: string | null }[] };
      if (page.data.length !== LIST_PAGE || page.data.some((file) => file.url === null)) throw new Error('the file list answered a page short of available files');
    },
    /** Whether DELETE /files/:id/permanent removed it (a file still waiting for its scan cannot be). */
    async deletePermanently(id: string): Promise<boolean> {
      const { status } = await call('DELETE', `/v1/files/${id}/permanent`, { authorization });
      return status === 204;
    },
    async thumbnail(id: string, preset: string): Promise<void> {
      const { status } = await call('GET', `/v1/files/${id}/thumbnail/${preset}`, { authorization });
      if (status !== 302) throw new Error(`thumbnail ${preset} of ${id} answered ${status}`);
    },
  };
}

/** Uploads to the floor's server (bench/files/floor-server.ts), each once its work is done: the keys it stored. */
function floorClient(baseUrl: string, tenantId: string) {
  const call = httpCaller(baseUrl);
  return async ({ type, bytes }: MultipartBody): Promise<string[]> => {
    const uploaded = await call('POST', `/upload?tenant=${tenantId}`, { 'content-type': type, 'content-length': bytes.length }, bytes);
    if (uploaded.status !== 201) throw new Error(`the floor's upload answered ${uploaded.status}: ${uploaded.text}`);
    const { id } = JSON.parse(uploaded.text) as { id: string };
    const { status, text } = await call('GET', `/available?id=${id}`, {});
    if (status !== 200) throw new Error(`the floor's file ${id} answered ${status}: ${text}`);
    return JSON.parse(text) as string[];
  };
}

/**
 * Tells when files are available with both upload thumbnails, by one query every 10 ms for every
 * file waited for (not one poll per upload, which would load PostgreSQL with the bench's own work).
 */
class AvailabilityWatcher {
  private readonly waiting = new Map<string, () => void>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly owner: DatabasePool) {}

  available(fileId: string): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.set(fileId, resolve);
      this.timer ??= setTimeout(() => void this.poll(), 10);
    });
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async poll(): Promise<void> {
    const ids = [...this.waiting.keys()];
    // A poll still running when the bench stops (it failed) must not hide the failure behind the pool's end.
    const done = await this.owner.anyFirst(sql.unsafe`
      SELECT id FROM files
      WHERE id = ANY(${sql.array(ids, 'uuid')}) AND status = 'available'
        AND (mime_type NOT LIKE 'image/%' OR thumbnails ?& ${sql.array([...UPLOAD_THUMBNAILS], 'text')})`).catch((error: unknown) => {
      if (this.stopped) return [];
      throw error;
    });
    for (const id of done as string[]) {
      this.waiting.get(id)?.();
      this.waiting.delete(id);
    }
    this.timer = this.waiting.size && !this.stopped ? setTimeout(() => void this.poll(), 10) : undefined;
  }
}

/**
 * The bench's files deleted permanently through the gateway, eight at a time (their objects and
 * thumbnails with them), then the direct side's objects. A run that failed may leave files still
 * waiting for their scan, which cannot be deleted yet: they are counted, not retried.
 */
async function removeStored(store: ObjectStore, client: ReturnType<typeof uploadClient>, stored: { files: string[]; objects: string[] }): Promise<void> {
  process.stderr.write(`removing the bench's ${stored.files.length} files and the direct side's ${stored.objects.length} objects\n`);
  const files = [...stored.files];
  let kept = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let id = files.pop(); id !== undefined; id = files.pop()) if (!await client.deletePermanently(id)) kept += 1;
  }));
  await removeObjects(store, stored.objects);
  if (kept > 0) process.stderr.write(`${kept} files could not be deleted (not scanned yet)\n`);
}

/** The upload pipeline's work with nothing around it: no HTTP, no database, no workflow. Answers the keys it stored. */
async function directUploadToAvailable(store: ObjectStore, scanner: VirusScanner, tenantId: string, png: Buffer): Promise<string[]> {
  const id = newId();
  const staging = `${tenantId}/bench-staging/${id}`;
  await store.s3.putObject(store.bucket, staging, Readable.from([png]), png.length, { 'Content-Type': 'image/png' });
  return promoteDirectly({ store, scanner }, staging, `${tenantId}/bench-direct/${id}`, png.length);
}

/** Random RGB noise compresses barely: 600×600 pixels make a PNG of about 1 MB. */
function noisePng(): Promise<Buffer> {
  return noise(600, 600).png({ compressionLevel: 1 }).toBuffer();
}

/** Blurred, so the JPEG is photo-sized (a few MB) rather than pure noise, which hardly compresses. */
function noiseJpeg(): Promise<Buffer> {
  return noise(2000, 1500).blur(1.5).jpeg({ quality: 85 }).toBuffer();
}

/** Random pixels: no two images have the same bytes. */
function noise(width: number, height: number): sharp.Sharp {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } });
}

async function distinctImages(count: number, render: () => Promise<Buffer>): Promise<Buffer[]> {
  const images: Buffer[] = [];
  for (let made = 0; made < count; made += 1) images.push(await render());
  return images;
}

/** The process's resident set before `work`, and the highest seen while it ran (sampled every 10 ms). */
async function sampleRss(pid: number, work: () => Promise<unknown>): Promise<{ before: number; peak: number }> {
  const rssOf = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
  const before = rssOf();
  let peak = before;
  const sampler = setInterval(() => { peak = Math.max(peak, rssOf()); }, 10);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return { before, peak: Math.max(peak, rssOf()) };
}

function heading(title: string): void {
  console.log(`\n## ${title}\nload average at the start: ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
}

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
