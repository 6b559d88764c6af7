import { createHash } from 'node:crypto';
import { PassThrough, Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client as MinioClient } from 'minio';
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
 */
export async function putStream(store: ObjectStore, key: string, source: Readable, contentType: string): Promise<StoredObject> {
  const measured = { bytes: 0, sha256: '', hash: createHash('sha256') };
  const body = new PassThrough();
  const upload = store.s3.putObject(store.bucket, key, body, undefined, { 'Content-Type': contentType });
  // A refused upload stops reading the body; ending the pipeline too keeps it from waiting forever.
  // Without an error: the body may have been written completely already, with no one left to hear it.
  upload.catch(() => body.destroy());
  await Promise.all([pipeline(source, measuring(measured), body), upload]);
  return { bytes: measured.bytes, sha256: measured.hash.digest('hex') };
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
