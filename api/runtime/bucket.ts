import type { Client as MinioClient } from 'minio';

/**
 * Creates the platform's bucket when it is missing. The gateway runs it at start-up, so a fresh
 * object store (a new Versity data folder, a new AWS account) needs no separate step. Losing a
 * race with another gateway that created it in between is success too.
 */
export async function ensureBucket(s3: MinioClient, bucket: string, region: string): Promise<'created' | 'exists'> {
  if (await s3.bucketExists(bucket)) return 'exists';
  try {
    await s3.makeBucket(bucket, region);
    return 'created';
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'BucketAlreadyOwnedByYou' || code === 'BucketAlreadyExists') return 'exists';
    throw error;
  }
}
