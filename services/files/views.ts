import type { ObjectStore } from '../../common/object-store';
import type { FileRow } from '../../db/queries/files/files.queries';
import { attachmentDisposition, servedInline } from './content-disposition';
import { processJobIdOf } from './process-job';

/** A file's lifecycle states, as the listing filters them. */
export { FILE_STATUSES, type FileStatus } from '../../db/queries/files/files.queries';

/** A file as the API answers it (docs/reference/files.md, Resources). */
export interface FileView {
  id: string;
  originalName: string;
  mimeType: string;
  size: number;
  bucket: string;
  /** purged files answer 404 and are never listed, so never shown. */
  status: Exclude<FileRow['status'], 'purged'>;
  /** A presigned GET of the stored file (FILE_URL_TTL_SECONDS) while it is available; null otherwise. */
  url: string | null;
  uploadedBy: string | null;
  tenantId: string;
  createdAt: string;
  deletedAt: string | null;
}

/** GET /files/:id?meta=1: the file with its client metadata and its thumbnails, {preset: presigned URL}. */
export interface FileDetails extends FileView {
  meta: Record<string, unknown> | null;
  thumbnails: Record<string, string>;
  /** The latest processing job (services/files/process.ts) with its public job id; absent if the file was never processed. */
  processing?: NonNullable<FileRow['processing']>;
}

/** How long the URLs in file objects (url, thumbnails) and the default redirect stay valid (docs/reference/files.md, Limits). */
export const FILE_URL_TTL_SECONDS = 300;

/**
 * The platform's own address of a user's avatar, GET /users/:id/avatar, which redirects to a
 * presigned URL of its avatar_64 thumbnail: unlike that URL it stays valid, so it may be stored (a
 * user's avatarUrl, services/identity/users/avatar.ts). `v` names the avatar's file, so the address
 * changes with the picture and a client's cache cannot show the old one. Relative to the gateway's
 * host, as the files service's other addresses are (a tus upload's Location, /v1/files/tus/{id}; a
 * job's, /v1/jobs/{jobId}): the gateway knows no public base URL of its own.
 */
export function avatarUrlOf(userId: string, fileId: string): string {
  return `/v1/users/${userId}/avatar?v=${fileId}`;
}

/**
 * A presigned GET of one of the file's objects. The URL names the object store's host (S3_ENDPOINT).
 * `contentType` is what the store answers with whatever the object was stored as (an upload is
 * stored with the type known when it started; a mimeType sent after the file decides the file's).
 */
export function presignedUrlOf(store: ObjectStore, key: string, ttlSeconds: number, contentType?: string): Promise<string> {
  return store.s3.presignedGetObject(store.bucket, key, ttlSeconds, contentType ? { 'response-content-type': contentType } : {});
}

/**
 * A presigned GET of the file's stored content, answered with the file's type; a type not shown in
 * place (servedInline) is answered as an attachment named as uploaded, as GET /files/:id?download=1 is.
 * Both are response-* overrides of the signed URL, so the store answers them whatever the object was
 * stored as, and a client cannot drop them without breaking the signature.
 */
export function contentUrlOf(
  store: ObjectStore, file: Pick<FileRow, 'mimeType' | 'originalName'> & { objectKey: string }, ttlSeconds: number,
): Promise<string> {
  const overrides: Record<string, string> = { 'response-content-type': file.mimeType };
  if (!servedInline(file.mimeType)) overrides['response-content-disposition'] = attachmentDisposition(file.originalName);
  return store.s3.presignedGetObject(store.bucket, file.objectKey, ttlSeconds, overrides);
}

export async function fileView(store: ObjectStore, row: FileRow): Promise<FileView> {
  if (row.status === 'purged') throw new Error(`file ${row.id} is purged and has no view`);
  const url = row.status === 'available' && row.objectKey !== null
    ? await contentUrlOf(store, { ...row, objectKey: row.objectKey }, FILE_URL_TTL_SECONDS) : null;
  return {
    id: row.id,
    originalName: row.originalName,
    mimeType: row.mimeType,
    size: row.sizeBytes,
    bucket: row.bucket,
    status: row.status,
    url,
    uploadedBy: row.uploadedBy,
    tenantId: row.tenantId,
    createdAt: row.createdAt,
    deletedAt: row.deletedAt,
  };
}

export async function fileDetails(store: ObjectStore, row: FileRow): Promise<FileDetails> {
  const thumbnails = await Promise.all(Object.entries(row.thumbnails).map(
    async ([preset, key]) => [preset, await presignedUrlOf(store, key, FILE_URL_TTL_SECONDS)] as const,
  ));
  const processing = row.processing ? { processing: { ...row.processing, jobId: processJobIdOf(row.processing.jobId) } } : {};
  return { ...await fileView(store, row), meta: row.meta, thumbnails: Object.fromEntries(thumbnails), ...processing };
}
