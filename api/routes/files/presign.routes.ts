import type { FilesDeps } from '../../../services/files/deps';
import { presignUpload, type PresignRequest } from '../../../services/files/presign';
import { authOf } from '../../context';
import { defineRoute, feeds, type AnyRoute } from '../../http/route-registry';
import { FILE_OPERATIONS } from './files.schemas';
import { presignedUpload, presignRequest } from './presign.schemas';

type NoParams = Record<string, never>;

/**
 * The presigned upload (docs/reference/files.md#rule-8; services/files/presign.ts). Needs files.write,
 * like the upload, and reserves what an upload takes: storage_bytes and a staging slot.
 */
export function filePresignRoutes(deps: FilesDeps): AnyRoute[] {
  const minutes = deps.settings.presignTtlMin;
  return [
    defineRoute<NoParams, NoParams, PresignRequest>({
      namespace: 'files', method: 'POST', path: '/files/presign', operationId: 'files.presign',
      summary: 'A presigned URL to PUT a file to; it can be read once its malware scan has passed',
      description: `The URL works for ${minutes} minutes and only for a PUT with exactly the declared Content-Type (fields) and `
        + 'Content-Length (sizeBytes): the object store refuses any other. The file is recorded pending_scan at once, its '
        + 'declared size counted into storage_bytes (over the plan\'s limit: 402 plan-limit-exceeded) and a staging slot '
        + 'taken (more than FILES_STAGING_MAX_PER_TENANT waiting: 503 staging-limit-exceeded). The platform notices the PUT '
        + 'itself and scans the file as an upload; a URL that expires unused rejects the file (upload-expired) and frees '
        + 'both. A declared size over the type\'s limit is 413 payload-too-large.',
      auth: 'bearer', permission: 'files.write', billing: { creates: 'storage_bytes' },
      schemas: { body: presignRequest, response: { 200: presignedUpload }, links: { 200: feeds(FILE_OPERATIONS, { from: '$response.body#/fileId' }) } },
      async handler(ctx) {
        ctx.body = await presignUpload(deps, authOf(ctx), ctx.guard.body);
      },
    }),
  ];
}
