import Joi from 'joi';
import { tenantId } from '../../http/ids';

export interface TenantIdParams {
  id: string;
}

export const tenantIdParams = Joi.object<TenantIdParams>({ id: tenantId.required() });

const timestamp = Joi.string().isoDate();

/** The termination status (docs/reference/billing.md#rule-28), with the progress of each phase and the end times. */
export const terminationStatus = Joi.object({
  tenantId: Joi.string().uuid().required(),
  status: Joi.string().valid('in_progress', 'completed', 'recovered').required(),
  phase: Joi.string().valid('deleting_records', 'deleting_files', 'completed').required(),
  startedAt: timestamp.required(),
  progress: Joi.object().unknown(true).required(),
  updatedAt: timestamp.required(),
  completedAt: timestamp.allow(null).required(),
  recoveredAt: timestamp.allow(null).required(),
});
