import Joi from 'joi';
import { JOB_STATUSES } from '../../../common/jobs';
import { problemSchema } from '../../openapi/problem.schema';
import { coldExportResult } from '../audit/export.schemas';
import { processedFile } from '../files/process.schemas';
import { replayResult } from '../events/dlq.schemas';
import { testResult } from '../events/webhooks.schemas';
import { transactionResponse } from '../money/holds.schemas';

export interface JobParams {
  jobId: string;
}

// Any text: job ids are opaque to clients, so one of a shape no kind issues is an unknown job (404, resolveJob), not a 400.
export const jobParams = Joi.object<JobParams>({
  jobId: Joi.string().required().description('<kind>.<id>, as the 202 that started the job answered it'),
});

const instant = Joi.string().isoDate();

export const jobView = Joi.object({
  jobId: Joi.string().required(),
  kind: Joi.string().required().example('audit-cold-export'),
  status: Joi.string().valid(...JOB_STATUSES).required(),
  startedAt: instant.required(),
  completedAt: instant.allow(null).required().description('When the work was done; null while it runs'),
  result: Joi.alternatives().try(coldExportResult, processedFile, replayResult, testResult, transactionResponse)
    .description('completed jobs only; its shape is the kind\'s (money kinds: the final transaction)'),
  error: problemSchema.description('failed jobs only: why, as an RFC 9457 problem'),
});
