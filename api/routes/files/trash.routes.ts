import type { FilesDeps } from '../../../services/files/deps';
import { deleteFile, permanentlyDeleteFile, restoreFile } from '../../../services/files/trash';
import { authOf } from '../../context';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { file, fileIdParams, type FileIdParams } from './files.schemas';

/**
 * The trash (docs/reference/files.md#rule-18; services/files/trash.ts). All three need files.delete;
 * another tenant's file is 404 file-not-found on each. The request and response shapes are the files
 * routes' own (files.schemas.ts).
 */
export function fileTrashRoutes(deps: FilesDeps): AnyRoute[] {
  const days = deps.settings.softDeleteRetentionDays;
  return [
    defineRoute<FileIdParams>({
      namespace: 'files', method: 'DELETE', path: '/files/:id', operationId: 'files.delete',
      summary: 'Moves an available file to the trash',
      description: `The file becomes deleted (GET answers 404), is still counted in storage_bytes, can be restored for ${days} days `
        + 'and is purged after that. Only an available file: pending_scan, rejected, already deleted or unknown ids are 404 file-not-found.',
      auth: 'bearer', permission: 'files.delete',
      schemas: { params: fileIdParams, response: { 204: null } },
      async handler(ctx) {
        await deleteFile(deps, authOf(ctx), ctx.guard.params.id);
        ctx.status = 204;
      },
    }),
    defineRoute<FileIdParams>({
      namespace: 'files', method: 'POST', path: '/files/:id/restore', operationId: 'files.restore',
      summary: 'Restores a file from the trash',
      description: `A deleted file whose deletion is at most ${days} days old becomes available again. A file that is not in the `
        + `trash is 400 file-not-deleted; one deleted more than ${days} days ago (purged or not yet) is 410 file-restore-expired.`,
      auth: 'bearer', permission: 'files.delete',
      schemas: { params: fileIdParams, response: { 200: file } },
      async handler(ctx) {
        ctx.body = await restoreFile(deps, authOf(ctx), ctx.guard.params.id);
      },
    }),
    defineRoute<FileIdParams>({
      namespace: 'files', method: 'DELETE', path: '/files/:id/permanent', operationId: 'files.deletePermanently',
      summary: 'Deletes an available or trashed file at once',
      description: 'Its content and thumbnails are removed from the store, its bytes leave storage_bytes, and it can never be '
        + 'restored. Other files (pending_scan, rejected, already purged, unknown ids) are 404 file-not-found.',
      auth: 'bearer', permission: 'files.delete',
      schemas: { params: fileIdParams, response: { 204: null } },
      async handler(ctx) {
        await permanentlyDeleteFile(deps, authOf(ctx), ctx.guard.params.id);
        ctx.status = 204;
      },
    }),
  ];
}
