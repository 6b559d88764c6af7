import Joi from 'joi';

export interface PlanParams {
  id: string;
}

export const planParams = Joi.object<PlanParams>({ id: Joi.string().max(100).required() });

const limit = Joi.number().integer().min(0).required();

/**
 * A plan (docs/reference/billing.md#rule-1); limits of 0 are unlimited. `limits` has exactly the contract's five
 * members; the money limits (maxTxAmount, maxBalance; docs/decisions/money.md, Credit, debit and reversals) are
 * answered in `moneyLimits` (docs/decisions/billing.md, Usage counting).
 */
export const plan = Joi.object({
  id: Joi.string().required(),
  name: Joi.string().required(),
  interval: Joi.string().valid('monthly', 'yearly').required(),
  price: Joi.number().integer().min(0).required(),
  currency: Joi.string().length(3).required(),
  limits: Joi.object({ users: limit, records: limit, storageBytes: limit, eventsPerDay: limit, modules: limit }).required(),
  moneyLimits: Joi.object({
    maxTxAmount: Joi.number().integer().min(0).description('Largest single money operation, in minor units; 0: unlimited'),
    maxBalance: Joi.number().integer().min(0).description('Largest wallet balance, in minor units; 0: unlimited'),
  }).required(),
  features: Joi.array().items(Joi.string()).required(),
});

export const planList = Joi.object({ data: Joi.array().items(plan).required() });
