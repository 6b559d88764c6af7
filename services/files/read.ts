import type { Readable } from 'node:stream';
import Joi from 'joi';
import type { AuthState } from '../../common/context';
import { keysetPageOf, positionOf, type KeysetPage, type KeysetPageRequest } from '../../common/pagination';
import { problems } from '../../common/problems';
import { selectFile, selectFiles, type FileFilter, type FileKeyset, type FileRow } from '../../db/queries/files/files.queries';
import { withTenant } from '../../db/tenant';
import { attachmentDisposition } from './content-disposition';
import type { FilesDeps } from './deps';
import { FILE_URL_TTL_SECONDS, contentUrlOf, fileDetails, fileView, type FileDetails, type FileView } from './views';

/**
 * Reading files (docs/reference/files.md#rule-11): only an available file's content is ever handed out. Access by
 * status: pending_scan is 404 file-not-found (as an unknown id or another tenant's file), rejected is
 * 422 file-rejected; deleted (the trash) is 404 too: POST /files/:id/restore brings it back (docs/decisions/files.md).
 * Every URL handed out is presigned for the stored object itself: staging keys are never signed.
 */

/** An available file of the caller's tenant, with its stored object's key (also thumbnail-on-demand.ts's). */
export async function availableFile(deps: FilesDeps, auth: AuthState, id: string): Promise<FileRow & { objectKey: string }> {
  return asAvailable(await withTenant(deps.db, auth.tenantId, (tx) => selectFile(tx, auth.tenantId, id)), id);
}

/** The access rule by status for a file read however it was found (by id, or as a user's avatar). */
export function asAvailable(row: FileRow | null, id: string): FileRow & { objectKey: string } {
  if (row?.status === 'rejected') throw problems.fileRejected(id);
  if (row?.status !== 'available' || row.objectKey === null) throw problems.fileNotFound(id);
  return { ...row, objectKey: row.objectKey };
}

/** GET /files/:id: where to redirect, a presigned URL valid FILE_URL_TTL_SECONDS. */
export async function fileRedirect(deps: FilesDeps, auth: AuthState, id: string): Promise<string> {
  const file = await availableFile(deps, auth, id);
  return contentUrlOf(deps.objectStore, file, FILE_URL_TTL_SECONDS);
}

/** GET /files/:id?meta=1. */
export async function fileMetadata(deps: FilesDeps, auth: AuthState, id: string): Promise<FileDetails> {
  return fileDetails(deps.objectStore, await availableFile(deps, auth, id));
}

export interface FileDownload {
  body: Readable;
  mimeType: string;
  size: number;
  disposition: string;
}

/** GET /files/:id?download=1: the stored bytes, streamed from the object store as they come. */
export async function openDownload(deps: FilesDeps, auth: AuthState, id: string): Promise<FileDownload> {
  const file = await availableFile(deps, auth, id);
  const body = await deps.objectStore.s3.getObject(deps.objectStore.bucket, file.objectKey);
  return { body, mimeType: file.mimeType, size: file.sizeBytes, disposition: attachmentDisposition(file.originalName) };
}

/** GET /files/:id/url: a presigned URL of the caller's TTL (1 s to 24 h, checked by the route). */
export async function fileUrl(deps: FilesDeps, auth: AuthState, id: string, ttlSeconds: number): Promise<{ url: string; expiresAt: string }> {
  const file = await availableFile(deps, auth, id);
  // The expiry is taken before signing, so it is never later than the signature's own.
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000).toISOString();
  return { url: await contentUrlOf(deps.objectStore, file, ttlSeconds), expiresAt };
}

const filePosition = Joi.object<FileKeyset>({ createdAt: Joi.string().isoDate(), id: Joi.string().guid() });

/** GET /files: the tenant's files, newest first, in either page envelope. */
export async function listFiles(
  deps: FilesDeps, auth: AuthState, filter: FileFilter, page: KeysetPageRequest,
): Promise<KeysetPage<FileView>> {
  const after = positionOf(page, filePosition);
  // One row more than the page tells whether another page exists.
  const rows = await withTenant(deps.db, auth.tenantId, (tx) => selectFiles(tx, auth.tenantId, filter, after, page.size + 1));
  const answer = keysetPageOf(rows, page, (row) => ({ createdAt: row.createdAt, id: row.id }), (row) => row);
  return { ...answer, data: await Promise.all(answer.data.map((row) => fileView(deps.objectStore, row))) };
}
