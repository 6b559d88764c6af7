import Joi from 'joi';
import type { ExportFormat } from '../../../db/queries/audit/audit-export.queries';
import { EXPORT_FORMATS } from '../../../db/queries/audit/audit-export.queries';
import { EXPORT_JOB_STATUSES } from '../../../db/queries/audit/audit-export.queries';

export interface ExportQuery {
  format: ExportFormat;
  since: Date;
  until: Date;
}

/** since inclusive, until exclusive (ISO 8601); until must come after since. */
export const exportQuery = Joi.object<ExportQuery>({
  format: Joi.string().valid(...EXPORT_FORMATS).default('json'),
  since: Joi.date().iso().required(),
  until: Joi.date().iso().greater(Joi.ref('since')).required()
    .messages({ 'date.greater': 'until must be later than since' }),
});

export interface ExportJobParams {
  jobId: string;
}

export const exportJobParams = Joi.object<ExportJobParams>({
  jobId: Joi.string().pattern(/^[0-9a-f]{32}$/).required().messages({ 'string.pattern.base': 'jobId is not a job id' }),
});

const instant = Joi.string().isoDate();

/** 202 of a range reaching cold storage; `code` names the outcome of document 2 (cold-export-initiated). */
export const coldExportAccepted = Joi.object({
  jobId: Joi.string().required(),
  status: Joi.string().valid('queued').required(),
  code: Joi.string().valid('cold-export-initiated').required(),
  statusUrl: Joi.string().required(),
});

export const exportJobStatus = Joi.object({
  jobId: Joi.string().required(),
  status: Joi.string().valid(...EXPORT_JOB_STATUSES).required(),
  format: Joi.string().valid(...EXPORT_FORMATS).required(),
  since: instant.required(),
  until: instant.required(),
  createdAt: instant.required(),
  completedAt: instant.allow(null).required(),
  expiresAt: instant.allow(null).required(),
  records: Joi.number().integer().min(0).allow(null).required(),
  bytes: Joi.number().integer().min(0).allow(null).required(),
  error: Joi.string().allow(null).required(),
  downloadUrl: Joi.string().uri(),
  downloadUrlExpiresAt: instant,
});
