import { TUS_RESUMABLE } from '@tus/server';
import { TUS_EXPOSED_HEADERS, TusUploads, type TusAnswer, type TusDeps, type TusRequest } from '../../../services/files/tus';
import { authOf } from '../../context';
import { defineRoute, type AnyRoute, type RouteContext } from '../../http/route-registry';
import {
  TUS_CHUNK_TYPE, checkedMetadata, tusChunk, tusCreateHeaders, tusHeaders, tusPatchHeaders, tusUploadParams,
  type TusCreateHeaders, type TusHeaders, type TusPatchHeaders, type TusUploadParams,
} from './tus.schemas';

type NoParams = Record<string, never>;

/** The request headers the tus server reads; nothing else of the request reaches it. */
const TUS_REQUEST_HEADERS = [
  'tus-resumable', 'upload-length', 'upload-metadata', 'upload-offset', 'origin', 'access-control-request-method',
  'access-control-request-headers',
];
/** Only a PATCH carries bytes: a POST's Content-Type would ask the server for a creation with upload, which is not served. */
const TUS_CHUNK_HEADERS = ['content-type', 'content-length'];

/** The request as the tus server reads it: its URL, its protocol headers, a PATCH's bytes. */
function tusRequestOf(ctx: RouteContext): TusRequest {
  const names = ctx.method === 'PATCH' ? [...TUS_REQUEST_HEADERS, ...TUS_CHUNK_HEADERS] : TUS_REQUEST_HEADERS;
  const headers = Object.fromEntries(names.flatMap((name) => {
    const value = ctx.get(name);
    return value === '' ? [] : [[name, value]];
  }));
  return { method: ctx.method, url: ctx.href, headers, ...(ctx.method === 'PATCH' && { body: ctx.req }) };
}

/**
 * Every answer carries Tus-Resumable (tus 1.0.0), refusals included, and may be read by a browser
 * on another origin: the token is a bearer header, never an ambient credential, so `*` opens nothing.
 */
function speakTus(ctx: RouteContext): void {
  ctx.set({ 'Tus-Resumable': TUS_RESUMABLE, 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': TUS_EXPOSED_HEADERS });
}

/** The tus server's answer as the response: its status and headers, no body. */
function answer(ctx: RouteContext, { status, headers }: TusAnswer): void {
  ctx.set(headers);
  ctx.body = null;
  ctx.status = status;
}

const RESUMING = 'Only an upload of the caller\'s tenant still waiting for its bytes is served: an unknown id, another tenant\'s, '
  + 'and a file whose scan has ended (available, rejected) or whose upload expired are 404 file-not-found.';

/**
 * Resumable uploads with the tus protocol 1.0.0 (issue 17, beyond the specification;
 * services/files/tus.ts), extensions creation, termination and expiration: POST creates an upload,
 * HEAD answers its offset, PATCH appends at the offset, DELETE terminates it, OPTIONS is the
 * protocol's discovery and the browsers' preflight (public). The file then takes the upload's way:
 * pending_scan, the malware scan, available or rejected. Creating, appending and terminating need
 * files.write, as uploading does.
 */
export function fileTusRoutes(deps: TusDeps): AnyRoute[] {
  const uploads = new TusUploads(deps);
  const hours = deps.settings.stagingTtlHours;
  return [
    defineRoute<NoParams, NoParams, undefined, TusCreateHeaders>({
      namespace: 'files', method: 'POST', path: '/files/tus', operationId: 'files.tusCreate',
      summary: 'Creates a resumable (tus) upload of a file',
      description: '201 with Location: the upload\'s URL (/v1/files/tus/{id}, id being the file\'s id) and Upload-Expires. The file '
        + 'is recorded pending_scan at once, its declared length counted into storage_bytes (over the plan\'s limit: 402 '
        + 'plan-limit-exceeded) and a staging slot taken (more than FILES_STAGING_MAX_PER_TENANT waiting: 503 '
        + `staging-limit-exceeded). An upload not finished within ${hours} hours is rejected (upload-expired), which frees both. `
        + 'Once its last byte is in, the file is scanned like an upload and GET /files/{id} serves it when the scan has passed.',
      auth: 'bearer', permission: 'files.write', billing: { creates: 'storage_bytes' },
      schemas: { headers: tusCreateHeaders, response: { 201: null } },
      async handler(ctx) {
        speakTus(ctx);
        const { 'Upload-Length': length, 'Upload-Metadata': metadata } = ctx.guard.headers;
        answer(ctx, await uploads.create(authOf(ctx), checkedMetadata(metadata), length, tusRequestOf(ctx), (fileId) => `${ctx.path}/${fileId}`));
      },
    }),
    defineRoute<TusUploadParams, NoParams, undefined, TusHeaders>({
      namespace: 'files', method: 'HEAD', path: '/files/tus/:id', operationId: 'files.tusOffset',
      summary: 'The offset of a resumable upload: where to resume',
      description: `200 with Upload-Offset (the bytes stored), Upload-Length, Upload-Metadata and Cache-Control: no-store. ${RESUMING} `
        + 'A complete upload is handed to its scan again (a finish that failed is repeated).',
      auth: 'bearer', permission: 'files.write',
      schemas: { params: tusUploadParams, headers: tusHeaders, response: { 200: null } },
      async handler(ctx) {
        speakTus(ctx);
        answer(ctx, await uploads.resume(authOf(ctx), ctx.guard.params.id, tusRequestOf(ctx)));
      },
    }),
    defineRoute<TusUploadParams, NoParams, undefined, TusPatchHeaders>({
      namespace: 'files', method: 'PATCH', path: '/files/tus/:id', operationId: 'files.tusAppend',
      summary: 'Appends bytes to a resumable upload at its offset',
      description: `204 with the new Upload-Offset. Upload-Offset must be the upload's offset (otherwise 409 conflict); more bytes than `
        + `remain of Upload-Length are 413 payload-too-large. ${RESUMING} The last byte hands the file to its malware scan; a file `
        + 'declared without a type gets the one its first bytes show, and over that type\'s size limit it is rejected (413).',
      auth: 'bearer', permission: 'files.write',
      streamedBody: { mediaType: TUS_CHUNK_TYPE, schema: tusChunk },
      schemas: { params: tusUploadParams, headers: tusPatchHeaders, response: { 204: null } },
      async handler(ctx) {
        speakTus(ctx);
        answer(ctx, await uploads.resume(authOf(ctx), ctx.guard.params.id, tusRequestOf(ctx)));
      },
    }),
    defineRoute<TusUploadParams, NoParams, undefined, TusHeaders>({
      namespace: 'files', method: 'DELETE', path: '/files/tus/:id', operationId: 'files.tusTerminate',
      summary: 'Terminates an incomplete resumable upload',
      description: `204: its bytes are removed and the file rejected (upload-terminated), freeing its storage and staging slot. ${RESUMING} `
        + 'A complete upload belongs to its scan: 409 conflict.',
      auth: 'bearer', permission: 'files.write',
      schemas: { params: tusUploadParams, headers: tusHeaders, response: { 204: null } },
      async handler(ctx) {
        speakTus(ctx);
        answer(ctx, await uploads.terminate(authOf(ctx), ctx.guard.params.id, tusRequestOf(ctx)));
      },
    }),
    optionsRoute(uploads, '/files/tus', 'files.tusOptions'),
    optionsRoute(uploads, '/files/tus/:id', 'files.tusUploadOptions', tusUploadParams),
  ];
}

/** OPTIONS of the creation URL and of an upload's URL: both are preflighted by browsers. */
function optionsRoute(uploads: TusUploads, path: string, operationId: string, params?: typeof tusUploadParams): AnyRoute {
  return defineRoute<unknown>({
    namespace: 'files', method: 'OPTIONS', path, operationId,
    summary: 'The tus server\'s capabilities, and the CORS preflight of the tus routes',
    description: '204 with Tus-Version, Tus-Extension (creation, termination, expiration), Tus-Max-Size and the '
      + 'Access-Control-Allow-* headers. Needs no token (a browser\'s preflight carries none).',
    auth: 'public',
    schemas: { ...(params && { params }), response: { 204: null } },
    async handler(ctx) {
      speakTus(ctx);
      answer(ctx, await uploads.options(tusRequestOf(ctx)));
    },
  });
}
