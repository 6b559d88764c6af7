import Joi from 'joi';
import { tenantId } from '../../http/ids';
import type { UsageQuery } from '../../../services/billing/usage';
import { pageOf, pageQuery } from '../../http/pagination';

const count = Joi.number().integer().min(0).required();
const values = Joi.object({ users: count, records: count, storageBytes: count, eventsPerDay: count, modules: count });

export const usageQuery = Joi.object<UsageQuery>({
  tenant_id: tenantId.description('Your own tenant (the default); another tenant is 404, except for the Platform Owner'),
  // Four-digit years from 1000: year 0000 does not exist, and PostgreSQL refused it as a date (a 500 until issue 15).
  period: Joi.string().pattern(/^[1-9][0-9]{3}-(0[1-9]|1[0-2])$/, 'YYYY-MM')
    .description('A month, YYYY-MM (years 1000 to 9999): answers shape 1 for it'),
  shape: Joi.string().valid('period', 'limits').description('period: shape 1 {period, usage, limits}; limits (default without period): shape 2'),
});

const metric = Joi.object({
  current: count,
  limit: count.description('0: unlimited'),
  percentage: Joi.number().min(0).allow(null).required().description('null when unlimited'),
});

/** Usage (docs/reference/billing.md#rule-19): shape 1 or shape 2. */
export const usage = Joi.alternatives().try(
  Joi.object({ tenantId: Joi.string().uuid().required(), period: Joi.string().required(), usage: values.required(), limits: values.required() }),
  Joi.object({
    tenantId: Joi.string().uuid().required(), planId: Joi.string().required(), planName: Joi.string().required(),
    usage: Joi.object({ users: metric, records: metric, storageBytes: metric, eventsPerDay: metric, modules: metric }).required(),
  }),
);

export const usageHistoryQuery = Joi.object({ ...pageQuery });

export const usageHistory = pageOf(Joi.object({
  // A day, not an instant: isoDate() would publish it as a date-time, which "2026-11-24" is not.
  date: Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/, 'YYYY-MM-DD').description('Day of the snapshot (UTC), YYYY-MM-DD').required(),
  planId: Joi.string().required(),
  usage: values.required(),
  limits: values.required(),
  takenAt: Joi.string().isoDate().required(),
}));
