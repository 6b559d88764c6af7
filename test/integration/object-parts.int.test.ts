import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { PART_BYTES, uploadInParts } from '../../common/object-parts';
import { createObjectStore } from '../../common/object-store';

/**
 * A stream of unknown length into the real object store as a multipart upload (common/object-parts.ts):
 * stored byte for byte whatever the chunks' sizes, a young collection asked for per full part (the
 * dead chunks of a streamed body, issue 17's memory limit), and a failing stream leaves neither an
 * object nor an unfinished upload behind.
 */

const store = createObjectStore(config().s3);
const { s3, bucket } = store;
const prefix = `object-parts-test/${newId()}`;

/** `total` bytes in chunks of `size`, each byte its offset's low bits, so a lost or doubled chunk shows. */
async function* chunks(total: number, size: number, failAt?: number): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < total; offset += size) {
    if (failAt !== undefined && offset >= failAt) throw new Error('the client went away');
    const chunk = Buffer.alloc(Math.min(size, total - offset));
    for (let i = 0; i < chunk.length; i += 1) chunk[i] = (offset + i) % 251;
    yield chunk;
  }
}

afterAll(async () => {
  await s3.removeObjects(bucket, ['odd-chunks', 'empty', 'small', 'one-part'].map((name) => `${prefix}/${name}`));
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('uploadInParts', () => {
  const exposed = (globalThis as { gc?: unknown }).gc;
  let collections: unknown[];

  beforeEach(() => {
    collections = [];
    (globalThis as { gc?: unknown }).gc = (options: unknown) => { collections.push(options); };
  });

  afterEach(() => {
    (globalThis as { gc?: unknown }).gc = exposed;
  });

  it('stores the stream byte for byte in parts, asking for a young collection per full part', async () => {
    const total = 2 * PART_BYTES + 12_345;
    const key = `${prefix}/odd-chunks`;
    await uploadInParts(s3, bucket, key, chunks(total, 65_521), 'application/octet-stream');
    const stored = await buffer(await s3.getObject(bucket, key));
    expect(stored.length).toBe(total);
    expect(sha256(stored)).toBe(sha256(await buffer(chunks(total, 1 << 20))));
    expect(collections).toEqual([{ type: 'minor' }, { type: 'minor' }]);
    expect((await s3.statObject(bucket, key)).metaData['content-type']).toBe('application/octet-stream');
  });

  it('an empty stream is an empty object, and one smaller than a part is one PUT that asks for no collection', async () => {
    const opened = jest.spyOn(s3, 'initiateNewMultipartUpload');
    try {
      await uploadInParts(s3, bucket, `${prefix}/empty`, chunks(0, 1), 'text/plain');
      await uploadInParts(s3, bucket, `${prefix}/small`, chunks(PART_BYTES - 1, 65_536), 'text/plain');
      expect(opened).not.toHaveBeenCalled();
    } finally {
      opened.mockRestore();
    }
    expect((await s3.statObject(bucket, `${prefix}/empty`)).size).toBe(0);
    const small = await s3.statObject(bucket, `${prefix}/small`);
    expect([small.size, small.metaData['content-type']]).toEqual([PART_BYTES - 1, 'text/plain']);
    expect(sha256(await buffer(await s3.getObject(bucket, `${prefix}/small`)))).toBe(sha256(await buffer(chunks(PART_BYTES - 1, 1 << 20))));
    expect(collections).toEqual([]);
  });

  it('a stream of exactly one part is a multipart upload of that part', async () => {
    const key = `${prefix}/one-part`;
    await uploadInParts(s3, bucket, key, chunks(PART_BYTES, 65_536), 'application/octet-stream');
    expect((await s3.statObject(bucket, key)).size).toBe(PART_BYTES);
    expect(collections).toEqual([{ type: 'minor' }]);
  });

  it('a stream failing within its first part: its own error, nothing sent to the store', async () => {
    const key = `${prefix}/failing-early`;
    await expect(uploadInParts(s3, bucket, key, chunks(PART_BYTES, 65_536, 100_000), 'application/octet-stream')).rejects.toThrow('the client went away');
    await expect(s3.statObject(bucket, key)).rejects.toMatchObject({ code: 'NotFound' });
  });

  it('a stream failing after a part was sent: its own error, no object, no unfinished upload', async () => {
    const key = `${prefix}/failing`;
    await expect(uploadInParts(s3, bucket, key, chunks(3 * PART_BYTES, 65_536, PART_BYTES + 100_000), 'application/octet-stream'))
      .rejects.toThrow('the client went away');
    await expect(s3.statObject(bucket, key)).rejects.toMatchObject({ code: 'NotFound' });
    const unfinished: unknown[] = [];
    for await (const upload of s3.listIncompleteUploads(bucket, key, true)) unfinished.push(upload);
    expect(unfinished).toEqual([]);
  });
});
