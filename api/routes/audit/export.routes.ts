import { EXPORT_CONTENT_TYPES } from '../../../services/audit/export-format';
import { coldExportStatus, requestColdExport } from '../../../services/audit/export/cold-export';
import type { AuditExportDeps } from '../../../services/audit/export/deps';
import { AUDIT_EXPORT_PERMISSION, coldExportJobHandle, exportJobIdOf } from '../../../services/audit/export/job';
import { openHotExport } from '../../../services/audit/export/hot-export';
import { exportFileName, planExport } from '../../../services/audit/export/plan';
import { authOf } from '../../context';
import { acceptJob } from '../../http/job-accepted';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import {
  coldExportAccepted, exportJobParams, exportJobStatus, exportQuery, type ExportJobParams, type ExportQuery,
} from './export.schemas';

type NoParams = Record<string, never>;

/**
 * The audit export (docs/reference/audit.md#rule-16; both route sets share it). Register these before GET /audit/:id, whose
 * path would otherwise also match /audit/export.
 */
export function auditExportRoutes(deps: AuditExportDeps): AnyRoute[] {
  return [
    defineRoute<NoParams, ExportQuery>({
      namespace: 'audit', method: 'GET', path: '/audit/export', operationId: 'audit.export',
      summary: 'Exports the tenant\'s audit records of a range as a JSON or CSV file',
      description: 'since inclusive, until exclusive. A range within the last AUDIT_HOT_DAYS (90) days is streamed at once '
        + '(200, Content-Disposition attachment, JSON array or CSV in chain order) after pending anonymizations finish; '
        + 'more than 90 days of such a range is 400 export-range-too-large. A range reaching further back starts a cold '
        + 'export and answers 202 {jobId} with Location /v1/jobs/{jobId}; that job, or GET /audit/export/{jobId}, follows '
        + 'it. CSV cells that a spreadsheet would run as a formula (starting with = + - @) are prefixed with an apostrophe.',
      auth: 'bearer',
      permission: AUDIT_EXPORT_PERMISSION,
      schemas: { query: exportQuery, response: { 200: null, 202: coldExportAccepted } },
      async handler(ctx) {
        const auth = authOf(ctx);
        const { format, since, until } = ctx.guard.query;
        const range = { since, until };
        if (planExport(range, deps.now(), deps.settings.hotDays) === 'cold') {
          const jobId = coldExportJobHandle(await requestColdExport(deps, auth, range, format));
          acceptJob(ctx, jobId, { status: 'queued', code: 'cold-export-initiated', statusUrl: `/v1/audit/export/${jobId}` });
          return;
        }
        const body = await openHotExport(deps, auth.tenantId, range, format);
        ctx.set('Content-Type', EXPORT_CONTENT_TYPES[format]);
        ctx.set('Content-Disposition', `attachment; filename="${exportFileName(range, format)}"`);
        ctx.body = body;
      },
    }),
    defineRoute<ExportJobParams>({
      namespace: 'audit', method: 'GET', path: '/audit/export/:jobId', operationId: 'audit.export.status',
      summary: 'The status of a cold export, with a download URL once it is completed',
      description: 'status is queued, running, completed (downloadUrl: a presigned URL valid AUDIT_EXPORT_URL_TTL_SECONDS), '
        + 'failed (error) or expired (the file was deleted after AUDIT_EXPORT_RETENTION_DAYS; ask for the export again). '
        + 'A job of another tenant is 404 not-found. GET /v1/jobs/{jobId} answers the same job in the form of every job.',
      auth: 'bearer',
      permission: AUDIT_EXPORT_PERMISSION,
      schemas: { params: exportJobParams, response: { 200: exportJobStatus } },
      async handler(ctx) {
        // The object key is the store's business; the caller downloads through the presigned URL.
        const exportJobId = exportJobIdOf(ctx.guard.params.jobId);
        const { id, objectKey: _objectKey, ...job } = await coldExportStatus(deps, authOf(ctx).tenantId, exportJobId);
        ctx.body = { jobId: coldExportJobHandle(id), ...job };
      },
    }),
  ];
}
