import type { Client as MinioClient } from 'minio';

/** S3's smallest part (every part but the last): the least memory a multipart upload can hold. */
export const PART_BYTES = 5 * 1024 * 1024;

/**
 * Uploads a stream of unknown length as an S3 multipart upload holding at most two parts in memory:
 * one filling while the other is sent. minio's own putObject for streams cuts parts with a
 * transform that keeps reading while a part is sent and concatenates each part anew, which held
 * three to four parts plus their garbage (about 60 MB for a 50 MB upload with 16 MiB parts, measured
 * 2026-11-25); a gateway streaming uploads must not grow with them (issue 17: under 30 MB for 50 MB).
 *
 * A stream that ends before its first part is full is stored with one PUT instead, as the AWS SDK's
 * managed upload does: the multipart upload is opened only when a first part is ready, so an image
 * of 1 MB costs the store one request instead of three (initiate, part, complete) and the uploading
 * process no part buffers (bench/files-object-parts.bench.ts).
 *
 * A failure of the stream or of the store aborts the upload, so nothing is stored and no part is
 * left behind (a stream that fails within its first part has sent nothing); the stream's own error
 * is the one thrown.
 */
export async function uploadInParts(
  s3: MinioClient, bucket: string, key: string, source: AsyncIterable<Buffer>, contentType: string,
): Promise<void> {
  let upload: Promise<string> | undefined;
  const etags: Array<{ part: number; etag: string }> = [];
  const send = async (payload: Buffer, part: number) => {
    upload ??= s3.initiateNewMultipartUpload(bucket, key, { 'Content-Type': contentType });
    const { etag } = await s3.uploadPart({ bucketName: bucket, objectName: key, uploadID: await upload, partNumber: part, headers: {} }, payload);
    etags.push({ part, etag });
  };
  // The first part's chunks are kept as they come: a body that ends within it is stored from them,
  // and the two part buffers (10 MiB outside V8's heap, which drives its collector) are only
  // allocated for a body of more than one part.
  const first: Buffer[] = [];
  let firstBytes = 0;
  const buffers: Buffer[] = [];
  let filling = 0;
  let filled = 0;
  let parts = 0;
  let sending: Promise<void> = Promise.resolve();
  try {
    for await (const chunk of source) {
      if (buffers.length === 0) {
        if (firstBytes + chunk.length < PART_BYTES) {
          first.push(chunk);
          firstBytes += chunk.length;
          continue;
        }
        buffers.push(Buffer.allocUnsafe(PART_BYTES), Buffer.allocUnsafe(PART_BYTES));
        for (const kept of first.splice(0)) filled += kept.copy(buffers[0], filled);
      }
      for (let offset = 0; offset < chunk.length;) {
        const copied = chunk.copy(buffers[filling], filled, offset);
        offset += copied;
        filled += copied;
        if (filled === PART_BYTES) {
          // The other buffer is free once its part is stored; only then is it filled again.
          await sending;
          parts += 1;
          sending = send(buffers[filling], parts);
          collectDeadChunks();
          filling = 1 - filling;
          filled = 0;
        }
      }
    }
    await sending;
    if (upload === undefined) {
      // Ended within the first part (an empty stream too): nothing was sent yet, every chunk is in `first`.
      await s3.putObject(bucket, key, Buffer.concat(first, firstBytes), firstBytes, { 'Content-Type': contentType });
      return;
    }
    // The last part may be short.
    if (filled > 0) await send(buffers[filling].subarray(0, filled), parts + 1);
    await s3.completeMultipartUpload(bucket, key, await upload, etags);
  } catch (error) {
    await sending.catch(() => undefined);
    const opened = await upload?.catch(() => undefined);
    if (opened !== undefined) await s3.abortMultipartUpload(bucket, key, opened).catch(() => undefined);
    throw error;
  }
}

/**
 * The stream's chunks are garbage once copied, but each holds 64 KiB outside V8's heap behind a
 * small object there, and V8 frees the bytes only when it collects the object: nothing in a body's
 * stream fills the young generation fast enough to trigger that, so a 50 MB upload left up to its
 * whole size of dead chunks in the resident set before a collection (the first one grew the gateway
 * by 22–60 MB, issue 17's limit is 30 MB), and the allocator kept the pages afterwards. A young
 * collection per part (about a millisecond) frees them as the body passes. The gateway runs with
 * `--expose-gc` for this (scripts/infra/app-up.sh, Dockerfile); a process without it does nothing.
 */
function collectDeadChunks(): void {
  (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc?.({ type: 'minor' });
}
