import { pageRequestOf } from '../../../common/pagination';
import type { FilesDeps } from '../../../services/files/deps';
import { fileMetadata, fileRedirect, fileUrl, listFiles, openDownload } from '../../../services/files/read';
import { uploadFile } from '../../../services/files/upload';
import { authOf } from '../../context';
import { defineRoute, feeds, type AnyRoute } from '../../http/route-registry';
import { validatedPart } from '../../middleware/validation-guard';
import {
  FILE_OPERATIONS, file, fileDetails, fileIdParams, fileListQuery, filePage, fileReadQuery, fileUrl as fileUrlSchema, fileUrlQuery, uploadFields, uploadFieldsSent, uploadForm,
  type FileIdParams, type FileListQuery, type FileReadQuery, type FileUrlQuery,
} from './files.schemas';

type NoParams = Record<string, never>;

const READ_RULES = 'Only an available file is read: pending_scan (not scanned yet), an unknown id, another tenant\'s file '
  + 'and a deleted file are 404 file-not-found; a file the malware scan rejected is 422 file-rejected.';

/**
 * The files routes (docs/reference/files.md#resources; first slice: upload and reading). Uploading needs files.write,
 * reading files.read. Static paths come before `/files/:id`.
 */
export function fileRoutes(deps: FilesDeps): AnyRoute[] {
  return [
    defineRoute({
      namespace: 'files', method: 'POST', path: '/files/upload', operationId: 'files.upload',
      summary: 'Uploads a file; it can be read once its malware scan has passed',
      description: 'multipart/form-data. The file is streamed to a private staging area and scanned; the answer is the file with '
        + 'status pending_scan and url null, and GET /files/{id} answers 404 until the scan has passed. Parts may come in any '
        + 'order; sent before the file part, the text fields are checked before a byte of it is stored, and a mimeType sets its '
        + 'size limit while it streams: over the limit is 413 payload-too-large as soon as it is crossed (sent after it, once the '
        + 'form is read). More than FILES_STAGING_MAX_PER_TENANT (100) files waiting for their scan: 503 staging-limit-exceeded. '
        + 'Over the plan\'s storage_bytes: 402 plan-limit-exceeded.',
      auth: 'bearer', permission: 'files.write', billing: { creates: 'storage_bytes' },
      streamedBody: { mediaType: 'multipart/form-data', schema: uploadForm },
      schemas: { response: { 201: file }, links: { 201: feeds(FILE_OPERATIONS) } },
      async handler(ctx) {
        ctx.body = await uploadFile(deps, authOf(ctx), { headers: ctx.req.headers, body: ctx.req }, {
          sent: (fields) => validatedPart(uploadFieldsSent, fields, 'body'),
          complete: (fields) => validatedPart(uploadFields, fields, 'body'),
        });
        ctx.status = 201;
      },
    }),
    defineRoute<NoParams, FileListQuery>({
      namespace: 'files', method: 'GET', path: '/files', operationId: 'files.list',
      summary: 'The tenant\'s files, newest first',
      description: 'Filters bucket, status, uploadedBy. page_size/page_token answer {data, next_page_token}, limit/cursor answer '
        + '{data, meta {cursor, hasMore}}; 1 to 100, default 20.',
      auth: 'bearer', permission: 'files.read',
      schemas: { query: fileListQuery, response: { 200: filePage } },
      async handler(ctx) {
        const { bucket, status, uploadedBy, ...paging } = ctx.guard.query;
        ctx.body = await listFiles(deps, authOf(ctx), { bucket, status, uploadedBy }, pageRequestOf(paging));
      },
    }),
    defineRoute<FileIdParams, FileUrlQuery>({
      namespace: 'files', method: 'GET', path: '/files/:id/url', operationId: 'files.url',
      summary: 'A presigned download URL of a file, valid ttlSeconds',
      description: `${READ_RULES} The URL names the object store's host and stops working after its TTL.`,
      auth: 'bearer', permission: 'files.read',
      schemas: { params: fileIdParams, query: fileUrlQuery, response: { 200: fileUrlSchema } },
      async handler(ctx) {
        ctx.body = await fileUrl(deps, authOf(ctx), ctx.guard.params.id, ctx.guard.query.ttlSeconds);
      },
    }),
    defineRoute<FileIdParams, FileReadQuery>({
      namespace: 'files', method: 'GET', path: '/files/:id', operationId: 'files.get',
      summary: 'Reads a file: a redirect to its content, its bytes, or its metadata',
      description: `Without a query: 302 to a presigned URL of the content, valid 300 s. download=1: 200 with the bytes, its media `
        + `type and Content-Disposition: attachment. meta=1: 200 with the file object, its meta and thumbnails. ${READ_RULES}`,
      auth: 'bearer', permission: 'files.read',
      schemas: { params: fileIdParams, query: fileReadQuery, response: { 200: fileDetails, 302: null }, bytes: { 200: '*/*' } },
      async handler(ctx) {
        const auth = authOf(ctx);
        const { params: { id }, query } = ctx.guard;
        // Each answer holds, or points at, a URL or content of a short life: no cache keeps it.
        ctx.set('Cache-Control', 'private, no-store');
        if (query.meta === 1) {
          ctx.body = await fileMetadata(deps, auth, id);
        } else if (query.download === 1) {
          const download = await openDownload(deps, auth, id);
          ctx.set('Content-Disposition', download.disposition);
          ctx.set('X-Content-Type-Options', 'nosniff');
          // As stored, not through Koa's type lookup, which drops a type it does not know.
          ctx.set('Content-Type', download.mimeType);
          ctx.length = download.size;
          ctx.body = download.body;
        } else {
          ctx.redirect(await fileRedirect(deps, auth, id));
        }
      },
    }),
  ];
}
