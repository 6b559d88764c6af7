import { createHash } from 'node:crypto';
import { PassThrough, Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client as MinioClient, CopyDestinationOptions, CopySourceOptions } from 'minio';
import type { Config } from './config';

/** The bucket a process writes to, with the client that reaches it (S3 through the minio client). */
export interface ObjectStore {
  s3: MinioClient;
  bucket: string;
}

/**
 * Streams of unknown length are uploaded in parts this large; each part is buffered, so this is
 * what one upload costs in memory (the client's default is 64 MiB).
 */
const UPLOAD_PART_BYTES = 16 * 1024 * 1024;

export function createObjectStore(cfg: Config['s3'], bucket = cfg.bucket): ObjectStore {
  const s3 = new MinioClient({
    endPoint: cfg.endPoint, port: cfg.port, useSSL: cfg.useSSL, accessKey: cfg.accessKey, secretKey: cfg.secretKey,
    region: cfg.region, partSize: UPLOAD_PART_BYTES,
  });
  return { s3, bucket };
}

export interface StoredObject {
  bytes: number;
  /** SHA-256 (hex) of the bytes as stored. */
  sha256: string;
}

/** Counts and hashes the bytes passing through. */
function measuring(into: StoredObject & { hash: ReturnType<typeof createHash> }): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      into.bytes += chunk.length;
      into.hash.update(chunk);
      done(null, chunk);
    },
  });
}

/**
 * Uploads a byte stream of unknown length (a multipart upload for large ones) and says what was
 * stored. A failure on either side fails the whole upload, and a retry writes the object anew.
 * `through` are transforms the bytes pass on their way (a size limit that fails the upload when
 * crossed); what is measured is what leaves them.
 *
 * Whatever fails, the store's side has settled when this returns: a failed stream ends the body
 * early (the store completes what it received, or refuses an empty multipart upload) instead of
 * leaving the store's upload waiting forever. So a caller that then discards the key
 * (discardUpload) finds everything the upload left, and nothing is written after it.
 */
export async function putStream(
  store: ObjectStore, key: string, source: Readable, contentType: string, through: readonly Transform[] = [],
): Promise<StoredObject> {
  const measured = { bytes: 0, sha256: '', hash: createHash('sha256') };
  const body = new PassThrough();
  const last = measuring(measured);
  last.pipe(body);
  const upload = store.s3.putObject(store.bucket, key, body, undefined, { 'Content-Type': contentType });
  // A refused upload stops reading the body; failing the stream too keeps it from waiting forever.
  upload.catch((error: unknown) => last.destroy(error instanceof Error ? error : new Error(String(error))));
  const [streamed, stored] = await Promise.allSettled([
    pipeline([source, ...through, last]).catch((error: unknown) => {
      last.unpipe(body);
      body.end();
      throw error;
    }),
    upload,
  ]);
  if (streamed.status === 'rejected') throw streamed.reason;
  if (stored.status === 'rejected') throw stored.reason;
  return { bytes: measured.bytes, sha256: measured.hash.digest('hex') };
}

/**
 * Removes what a failed or refused upload may have left under a key: the object, and the parts of
 * the multipart upload that never completed (putStream always opens one before the first byte;
 * its parts are invisible to listings but still stored). Nothing left is success.
 */
export async function discardUpload(store: ObjectStore, key: string): Promise<void> {
  const uploadId = await store.s3.findUploadId(store.bucket, key);
  await Promise.all([
    uploadId === undefined ? undefined : store.s3.abortMultipartUpload(store.bucket, key, uploadId),
    removeObjects(store, [key]),
  ]);
}

const discard = () => new Writable({ write: (_chunk, _encoding, done) => done() });

/** Reads an object to its end without keeping it, for the check after an upload. */
export async function measureObject(store: ObjectStore, key: string): Promise<StoredObject> {
  const measured = { bytes: 0, sha256: '', hash: createHash('sha256') };
  await pipeline(await store.s3.getObject(store.bucket, key), measuring(measured), discard());
  return { bytes: measured.bytes, sha256: measured.hash.digest('hex') };
}

/** Removes objects; removing one that is already gone is success, so a retry is harmless. */
export async function removeObjects(store: ObjectStore, keys: readonly string[]): Promise<void> {
  if (keys.length > 0) await store.s3.removeObjects(store.bucket, [...keys]);
}

/**
 * Copies an object within the bucket on the server side (no bytes pass through this process),
 * content type and metadata included. Copying again onto the same key writes the same object, so a
 * retry is harmless.
 */
export async function copyObject(store: ObjectStore, from: string, to: string): Promise<void> {
  await store.s3.copyObject(
    new CopySourceOptions({ Bucket: store.bucket, Object: from }),
    new CopyDestinationOptions({ Bucket: store.bucket, Object: to }),
  );
}
