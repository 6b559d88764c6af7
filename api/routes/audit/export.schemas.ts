import Joi from 'joi';
import { EXPORT_FORMATS, type ExportFormat } from '../../../services/audit/export-format';
import { EXPORT_JOB_STATUSES } from '../../../services/audit/export/cold-export';
import { COLD_EXPORT_JOB } from '../../../services/audit/export/job';

export interface ExportQuery {
  format: ExportFormat;
  since: Date;
  until: Date;
}

/** since inclusive, until exclusive (ISO 8601); until must come after since. */
export const exportQuery = Joi.object<ExportQuery>({
  format: Joi.string().valid(...EXPORT_FORMATS).default('json'),
  since: Joi.date().iso().required(),
  until: Joi.date().iso().greater(Joi.ref('since')).required().description('Exclusive upper bound (ISO 8601), later than since')
    .messages({ 'date.greater': 'until must be later than since' }),
});

export interface ExportJobParams {
  jobId: string;
}

/** The job id the 202 answers (`audit-cold-export.<id>`), or the bare id it answered before jobs had kinds. */
export const exportJobParams = Joi.object<ExportJobParams>({
  jobId: Joi.string().pattern(new RegExp(`^(?:${COLD_EXPORT_JOB}\\.)?[0-9a-f]{32}$`)).required()
    .messages({ 'string.pattern.base': 'jobId is not a job id' }),
});

const instant = Joi.string().isoDate();

/**
 * 202 of a range reaching cold storage; `code` names the outcome of docs/reference/audit.md#rule-16 (cold-export-initiated).
 * The job is followed at GET /v1/jobs/{jobId} (the Location) or, as before, at statusUrl.
 */
export const coldExportAccepted = Joi.object({
  jobId: Joi.string().required().example('audit-cold-export.3f2a9c0d5e7b41c8a6d2e0f1b4c3a597'),
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

/** The result of a completed cold-export job (GET /v1/jobs/{jobId}): the file, while it is kept. */
export const coldExportResult = Joi.object({
  format: Joi.string().valid(...EXPORT_FORMATS).required(),
  since: instant.required(),
  until: instant.required(),
  records: Joi.number().integer().min(0).allow(null).required(),
  bytes: Joi.number().integer().min(0).allow(null).required(),
  expiresAt: instant.allow(null).required(),
  expired: Joi.boolean().required().description('The file was deleted after AUDIT_EXPORT_RETENTION_DAYS; ask for the export again'),
  downloadUrl: Joi.string().uri().description('A presigned GET valid AUDIT_EXPORT_URL_TTL_SECONDS, while the file is kept'),
  downloadUrlExpiresAt: instant,
});
