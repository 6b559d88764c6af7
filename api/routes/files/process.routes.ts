import { requestProcessing, type FileProcessDeps, type FileProcessRequest } from '../../../services/files/process';
import { authOf } from '../../context';
import { acceptJob } from '../../http/job-accepted';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { fileIdParams, type FileIdParams } from './files.schemas';
import { processAccepted, processBody } from './process.schemas';

/**
 * Image processing (docs/reference/files.md#rule-16; services/files/process.ts), a job followed at
 * GET /v1/jobs/{jobId}. Needs files.write, as uploading does.
 */
export function fileProcessRoutes(deps: FileProcessDeps): AnyRoute[] {
  const timeout = deps.settings.imageProcessingTimeoutSec;
  return [
    defineRoute<FileIdParams, Record<string, never>, FileProcessRequest>({
      namespace: 'files', method: 'POST', path: '/files/:id/process', operationId: 'files.process',
      summary: 'Applies crop, resize, convert and rotate operations to an image file, as a job',
      description: '202 with the job; Location: /v1/jobs/{jobId}. The operations apply in order; the result replaces the file\'s '
        + 'content (url, mimeType, size) and its icon_32 and card_300 thumbnails are rendered again (other presets on demand); '
        + 'GET /files/{id}?meta=1 shows the job. Checked now: only an available file (pending_scan, deleted, unknown ids and '
        + 'another tenant\'s are 404 file-not-found, rejected 422 file-rejected), an image whose header sharp reads and whose '
        + 'size every crop fits (otherwise 422 processing-failed). Found by the job: pixels that cannot be decoded (the job '
        + `fails with processing-failed). An attempt over ${timeout} s is abandoned and retried, the file keeping its content.`,
      auth: 'bearer', permission: 'files.write',
      schemas: { params: fileIdParams, body: processBody, response: { 202: processAccepted } },
      async handler(ctx) {
        const { params: { id }, body } = ctx.guard;
        const accepted = await requestProcessing(deps, authOf(ctx), id, body);
        acceptJob(ctx, accepted.jobId, { ...accepted });
      },
    }),
  ];
}
