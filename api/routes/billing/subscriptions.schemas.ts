import Joi from 'joi';
import { SUBSCRIPTION_STATUSES } from '../../../services/billing/subscriptions';
import { uuid } from '../../http/ids';

const instant = Joi.string().isoDate();

export interface SubscriptionParams {
  id: string;
}

export const subscriptionParams = Joi.object<SubscriptionParams>({ id: uuid.required() });

export interface SubscriptionQuery {
  tenantId?: string;
}

/** The `tenantId` filter (docs/reference/billing.md#rule-12): only the caller's own tenant exists for it (another is 404). */
export const subscriptionQuery = Joi.object<SubscriptionQuery>({ tenantId: uuid });

export interface ChangePlanBody {
  planId: string;
  version: number;
}

export const changePlanBody = Joi.object<ChangePlanBody>({
  planId: Joi.string().max(100).required(),
  version: Joi.number().integer().min(1).required(),
});

export interface SelectPlanBody {
  planId: string;
}

/** The initial plan selection (docs/reference/billing.md#rule-6): the plan the trial converts to. */
export const selectPlanBody = Joi.object<SelectPlanBody>({ planId: Joi.string().max(100).required() });

export interface CancelDowngradeBody {
  reason: string;
}

export const cancelDowngradeBody = Joi.object<CancelDowngradeBody>({ reason: Joi.string().min(1).max(500).required() });

/** The subscription (docs/reference/billing.md#resources). */
export const subscription = Joi.object({
  id: uuid.required(),
  tenantId: uuid.required(),
  planId: Joi.string().required(),
  status: Joi.string().valid(...SUBSCRIPTION_STATUSES).required(),
  version: Joi.number().integer().min(1).required(),
  trialEndsAt: instant.allow(null).required(),
  currentPeriodStart: instant.required(),
  currentPeriodEnd: instant.required(),
  cancelAtPeriodEnd: Joi.boolean().required(),
  pendingChange: Joi.object({
    planId: Joi.string().required(),
    kind: Joi.string().valid('downgrade').required(),
    requestedAt: instant.required(),
    effectiveAt: instant.required(),
  }).allow(null).required(),
});
