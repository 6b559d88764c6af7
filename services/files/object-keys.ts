/**
 * Where a file's objects live in the platform's one bucket (docs/decisions/files.md). Every key starts
 * with the tenant id, so a tenant's objects share one prefix and no key of one tenant is a prefix of
 * another's. Staging is its own prefix, beside the buckets: no URL the platform hands out ever names
 * it, so nothing can be fetched before its scan has passed.
 */

/** The five buckets (docs/reference/files.md#rule-1); anything else is 400 bucket-invalid. */
export const FILE_BUCKETS = ['avatars', 'assets', 'documents', 'exports', 'modules'] as const;
export type FileBucket = (typeof FILE_BUCKETS)[number];

export function isFileBucket(value: string): value is FileBucket {
  return (FILE_BUCKETS as readonly string[]).includes(value);
}

/**
 * `{tenantId}/staging/{fileId}`: where a presigned upload's PUT lands and waits for its scan. The
 * store's notification of a PUT under a key of this shape is what tells its scan the bytes are there
 * (presignedFileOfKey, services/files/staged-objects.ts).
 */
export function presignedStagingKeyOf(tenantId: string, fileId: string): string {
  return `${stagingPrefixOf(tenantId)}${fileId}`;
}

/**
 * `{tenantId}/staging/received-{fileId}`: where a file the gateway receives itself (POST /files/upload,
 * a resumable upload) waits for its scan. The gateway starts or signals that scan itself; the store
 * notifies its PUT all the same, and a key of this shape lets the notification's consumer pass it over
 * without a signal or a read (docs/decisions/files.md, Presigned uploads are noticed by the store).
 * A name in the staging folder, not a folder of its own: the store keeps objects as files and removes
 * a folder its last object leaves, so a PUT creating `received/` while the emptied `staging/` above it
 * was being removed would fail.
 */
export function receivedStagingKeyOf(tenantId: string, fileId: string): string {
  return `${stagingPrefixOf(tenantId)}received-${fileId}`;
}

/** Where a file may have been staged, when its row (which names the key) is gone. */
export function stagingKeysOf(tenantId: string, fileId: string): string[] {
  return [presignedStagingKeyOf(tenantId, fileId), receivedStagingKeyOf(tenantId, fileId)];
}

/**
 * What a resumable (tus) upload keeps beside its staging key while it is incomplete and until its
 * file leaves staging (services/files/tus.ts): the tus S3 store's info object (the upload's length,
 * metadata and multipart upload id) and its incomplete part (a chunk shorter than S3's smallest part).
 * They share the staging prefix and never match presignedFileOfKey.
 */
export function tusSidecarKeysOf(stagingKey: string): string[] {
  return [`${stagingKey}.info`, `${stagingKey}.part`];
}

/** Every staged object of a tenant starts with this. */
export function stagingPrefixOf(tenantId: string): string {
  return `${tenantId}/staging/`;
}

/** `{tenantId}/{bucket}/{fileId}/original`: the stored file once its scan has passed. */
export function objectKeyOf(tenantId: string, bucket: string, fileId: string): string {
  return `${tenantId}/${bucket}/${fileId}/original`;
}

/** `{tenantId}/{bucket}/{fileId}/thumbnails/{preset}.webp`. */
export function thumbnailKeyOf(tenantId: string, bucket: string, fileId: string, preset: string): string {
  return `${tenantId}/${bucket}/${fileId}/thumbnails/${preset}.webp`;
}

/**
 * `{tenantId}/{bucket}/{fileId}/versions/{jobId}`: the content a processing job made (services/files/process.ts).
 * Never the key it was made from, so a run that fails or times out leaves the file's content as it was.
 */
export function versionKeyOf(tenantId: string, bucket: string, fileId: string, jobId: string): string {
  return `${tenantId}/${bucket}/${fileId}/versions/${jobId}`;
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const PRESIGNED_STAGING_KEY = new RegExp(`^(${UUID})/staging/(${UUID})$`, 'i');

/** The presigned upload a key belongs to (presignedStagingKeyOf read backwards); null for any other key. */
export function presignedFileOfKey(key: string): { tenantId: string; fileId: string } | null {
  const match = PRESIGNED_STAGING_KEY.exec(key);
  return match ? { tenantId: match[1], fileId: match[2] } : null;
}
