/**
 * Where a file's objects live in the platform's one bucket (docs/decisions/files.md). Every key starts
 * with the tenant id, so a tenant's objects share one prefix and no key of one tenant is a prefix of
 * another's. Staging is its own prefix, beside the buckets: no URL the platform hands out ever names
 * it, so nothing can be fetched before its scan has passed.
 */

/** The five buckets of document 2; anything else is 400 bucket-invalid. */
export const FILE_BUCKETS = ['avatars', 'assets', 'documents', 'exports', 'modules'] as const;
export type FileBucket = (typeof FILE_BUCKETS)[number];

export function isFileBucket(value: string): value is FileBucket {
  return (FILE_BUCKETS as readonly string[]).includes(value);
}

/** `{tenantId}/staging/{fileId}`: where an upload waits for its scan. */
export function stagingKeyOf(tenantId: string, fileId: string): string {
  return `${stagingPrefixOf(tenantId)}${fileId}`;
}

/**
 * What a resumable (tus) upload keeps beside its staging key while it is incomplete and until its
 * file leaves staging (services/files/tus.ts): the tus S3 store's info object (the upload's length,
 * metadata and multipart upload id) and its incomplete part (a chunk shorter than S3's smallest part).
 * They share the staging prefix and never match stagedFileOfKey.
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
const STAGING_KEY = new RegExp(`^(${UUID})/staging/(${UUID})$`, 'i');

/** The file a staging key belongs to (stagingKeyOf read backwards); null for any other key. */
export function stagedFileOfKey(key: string): { tenantId: string; fileId: string } | null {
  const match = STAGING_KEY.exec(key);
  return match ? { tenantId: match[1], fileId: match[2] } : null;
}
