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
