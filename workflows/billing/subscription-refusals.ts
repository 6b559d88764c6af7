import { ApplicationFailure } from '@temporalio/workflow';
import type { ChangePlanRequest, SubscriptionView, UpdateRefusal } from './billing.messages';
import { INVALID_TRANSITION, transition } from './subscription-transitions';

/**
 * The checks of the subscription workflow's Updates. Each runs twice: in the Update's validator, so
 * a refusal never enters the history, and again in its handler once the first load is done. A
 * refusal is a non-retryable failure whose type is the problem suffix the gateway answers with.
 */
function refuse(type: UpdateRefusal, message: string, details: unknown[] = []): never {
  throw ApplicationFailure.create({ message, type, nonRetryable: true, details });
}

const changesPlans = (s: SubscriptionView): boolean => transition(s.status, 'plan_change_requested') !== INVALID_TRANSITION;

export function checkChangePlan(s: SubscriptionView, request: ChangePlanRequest): void {
  if (!changesPlans(s)) refuse(INVALID_TRANSITION, `A ${s.status} subscription cannot change plans`);
  if (request.version !== s.version) {
    refuse('optimistic-lock-conflict', `Version ${request.version} is not the current version ${s.version}`, [s.version]);
  }
  if (s.pendingChange) refuse('plan-change-in-progress', `A change to ${s.pendingChange.planId} is already pending`);
  if (request.planId === s.planId) refuse(INVALID_TRANSITION, `The subscription is already on plan ${s.planId}`);
}

/** The initial plan selection belongs to the trial; other statuses change plans with PATCH (409). */
export function checkSelectPlan(s: SubscriptionView, planId: string): void {
  if (s.status === 'terminated') refuse(INVALID_TRANSITION, 'A terminated subscription cannot select a plan');
  if (s.status !== 'trialing') refuse('conflict', `The subscription is ${s.status}; change its plan with PATCH`);
  if (s.pendingChange) refuse('plan-change-in-progress', `A change to ${s.pendingChange.planId} is already pending`);
  if (planId === s.planId) refuse(INVALID_TRANSITION, `The subscription is already on plan ${planId}`);
}

export function checkCancelDowngrade(s: SubscriptionView): void {
  if (!changesPlans(s)) refuse(INVALID_TRANSITION, `The subscription is ${s.status}`);
  if (!s.pendingChange) refuse('conflict', 'There is no pending downgrade to cancel');
}

export function checkCancel(s: SubscriptionView): void {
  if (transition(s.status, 'cancel_requested') === INVALID_TRANSITION) refuse(INVALID_TRANSITION, `The subscription is already ${s.status}`);
}
