import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent as HttpsAgent } from 'node:https';
import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client as MinioClient, CopyDestinationOptions, CopySourceOptions } from 'minio';
import { presignSignatureV4 } from 'minio/dist/main/signing.js';
import type { Config } from './config';
import { uploadInParts } from './object-parts';

/** What a presigned PUT binds besides the key: the request must carry exactly these headers. */
export interface BoundPut {
  contentType: string;
  contentLength: number;
}

/**
 * The minio client, able to presign a PUT whose signature covers Content-Type and Content-Length.
 * minio's own presignedPutObject signs `host` only, and its signing helper drops the lower-case
 * `content-type` and `content-length` from a request's headers (signing.ts getSignedHeaders). The
 * helper lower-cases every signed header's name in the canonical request it builds, so handing it
 * the two headers under their canonical capitalised names signs them as SigV4 defines (the
 * presign test checks against the store that another length or type is refused).
 */
class ObjectStoreClient extends MinioClient {
  async presignedBoundPut(bucket: string, key: string, bound: BoundPut, expirySeconds: number, requestDate: Date): Promise<string> {
    const region = await this.getBucketRegionAsync(bucket);
    const request = this.getRequestOptions({ method: 'PUT', region, bucketName: bucket, objectName: key });
    const headers = { host: request.headers.host, 'Content-Length': String(bound.contentLength), 'Content-Type': bound.contentType };
    return presignSignatureV4({ ...request, headers }, this.accessKey, this.secretKey, this.sessionToken, region, requestDate, expirySeconds);
  }
}

/** The bucket a process writes to, with the client that reaches it (S3 through the minio client). */
export interface ObjectStore {
  s3: MinioClient;
  bucket: string;
}

/**
 * A presigned PUT of `key` valid `expirySeconds` from `requestDate` that the store accepts only with
 * exactly the bound Content-Type and Content-Length. Signing is local (the region is known to the
 * client), so no call reaches the store. The store must come from createObjectStore.
 */
export function presignBoundPut(store: ObjectStore, key: string, bound: BoundPut, expirySeconds: number, requestDate: Date): Promise<string> {
  if (!(store.s3 instanceof ObjectStoreClient)) throw new Error('presignBoundPut needs an object store made by createObjectStore');
  return store.s3.presignedBoundPut(store.bucket, key, bound, expirySeconds, requestDate);
}

/**
 * The HTTPS agent of a store whose certificate a private CA signed (S3_CA_FILE), for every S3 client:
 * the minio client's transportAgent and the AWS SDK's httpsAgent (@tus/s3-store, services/files/tus.ts).
 * Undefined without one: the clients then use Node's global agents and its built-in CAs. It keeps
 * connections alive as the global agent does, dropping idle ones after 5 s, before the store does
 * (docs/decisions/platform.md, Infrastructure: the object store keeps connections alive).
 */
export function s3HttpsAgent(cfg: Config['s3']): HttpsAgent | undefined {
  if (!cfg.useSSL || !cfg.caFile) return undefined;
  return new HttpsAgent({ keepAlive: true, scheduling: 'lifo', timeout: 5000, ca: readFileSync(cfg.caFile, 'utf8') });
}

/**
 * Every minio client of the platform: S3_USE_SSL with S3_CA_FILE (s3HttpsAgent), S3_PATH_STYLE; the
 * server's certificate is always checked, host name included.
 */
export function createS3Client(cfg: Config['s3']): MinioClient {
  const transportAgent = s3HttpsAgent(cfg);
  return new ObjectStoreClient({
    endPoint: cfg.endPoint, port: cfg.port, useSSL: cfg.useSSL, accessKey: cfg.accessKey, secretKey: cfg.secretKey,
    region: cfg.region, pathStyle: cfg.pathStyle, ...(transportAgent && { transportAgent }),
  });
}

export function createObjectStore(cfg: Config['s3'], bucket = cfg.bucket): ObjectStore {
  return { s3: createS3Client(cfg), bucket };
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
 * Uploads a byte stream of unknown length (a multipart upload of at most two parts in memory,
 * common/object-parts.ts) and says what was stored. `through` are transforms the bytes pass on
 * their way (a size limit that fails the upload when crossed); what is measured is what leaves them.
 *
 * A failure on either side fails the whole upload and aborts it, so nothing is stored under the key
 * and no part is left; a retry writes the object anew. A caller that refuses the object after it was
 * stored, or finds one left by a process that died mid-upload, removes it with discardUpload.
 */
export async function putStream(
  store: ObjectStore, key: string, source: Readable, contentType: string, through: readonly Transform[] = [],
): Promise<StoredObject> {
  const measured = { bytes: 0, sha256: '', hash: createHash('sha256') };
  const body = measuring(measured);
  const [streamed, stored] = await Promise.allSettled([
    pipeline([source, ...through, body]),
    uploadInParts(store.s3, store.bucket, key, body, contentType).catch((error: unknown) => {
      // The store refused: the stream, no longer read, would otherwise wait forever. Destroyed without
      // an error, since the pipeline may be over already and nothing would hear it.
      body.destroy();
      throw error;
    }),
  ]);
  // A stream that failed (a size limit crossed) failed the upload with its own error; a store that
  // failed closed the stream early: either way the upload's reason is the one to give.
  if (stored.status === 'rejected') throw stored.reason;
  if (streamed.status === 'rejected') throw streamed.reason;
  return { bytes: measured.bytes, sha256: measured.hash.digest('hex') };
}

/**
 * Removes what a failed or refused upload may have left under a key: the object, and the parts of
 * the multipart upload that never completed (its parts are invisible to listings but still stored).
 * Nothing left is success.
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
 * retry is harmless. With `ifMatch` (an ETag) the store copies only that content of `from`, and
 * refuses otherwise (isPreconditionFailed).
 */
export async function copyObject(store: ObjectStore, from: string, to: string, ifMatch?: string): Promise<void> {
  await store.s3.copyObject(
    new CopySourceOptions({ Bucket: store.bucket, Object: from, ...(ifMatch && { MatchETag: ifMatch }) }),
    new CopyDestinationOptions({ Bucket: store.bucket, Object: to }),
  );
}

/** The store refused a conditional request (copyObject's `ifMatch`): the object is not that content. */
export function isPreconditionFailed(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === 'PreconditionFailed';
}
