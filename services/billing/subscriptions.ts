import { problems } from '../../common/problems';
import { selectPlan, type PlanRow } from '../../db/queries/billing/plans.queries';
import { selectSubscription } from '../../db/queries/billing/subscriptions.queries';
import { withTenant } from '../../db/tenant';
import {
  cancelDowngradeUpdate, cancelSubscriptionUpdate, changePlanUpdate, selectPlanUpdate,
  type ChangePlanRequest, type SubscriptionView,
} from '../../workflows/billing/billing.messages';
import type { BillingDeps } from './deps';
import { toSubscriptionView } from './subscription-mirror';

/** The subscription's lifecycle states, as the API shows them. */
export { SUBSCRIPTION_STATUSES } from '../../db/queries/billing/subscriptions.queries';

/** The tenant's subscription (every tenant has one from registration on). */
export async function currentSubscription(deps: BillingDeps, tenantId: string): Promise<SubscriptionView> {
  const row = await withTenant(deps.db, tenantId, (tx) => selectSubscription(tx, tenantId));
  if (!row) throw problems.notFound('subscription');
  return toSubscriptionView(row);
}

/** The tenant's subscription by id; another tenant's id (or an unknown one) is 404. */
async function ownSubscription(deps: BillingDeps, tenantId: string, subscriptionId: string): Promise<SubscriptionView> {
  const subscription = await currentSubscription(deps, tenantId);
  if (subscription.id !== subscriptionId) throw problems.notFound('subscription');
  return subscription;
}

async function knownPlan(deps: BillingDeps, planId: string): Promise<PlanRow> {
  const plan = await selectPlan(deps.db, planId);
  if (!plan) throw problems.validation([{ field: 'planId', code: 'INVALID_VALUE', message: `There is no plan ${planId}` }]);
  return plan;
}

/** How generous a limit is: 0 means unlimited. */
const reach = (limit: number): number => (limit === 0 ? Number.POSITIVE_INFINITY : limit);

/**
 * A dearer plan is an upgrade; at the same price (free and enterprise cost 0 here) the one with the
 * larger user ceiling is. Upgrades apply at once, downgrades at the next cycle (docs/reference/billing.md#rule-8).
 */
export function changeKind(from: PlanRow, to: PlanRow): ChangePlanRequest['kind'] {
  if (to.price !== from.price) return to.price > from.price ? 'upgrade' : 'downgrade';
  return reach(to.limits.users) >= reach(from.limits.users) ? 'upgrade' : 'downgrade';
}

/** PATCH /billing/subscriptions/:id {planId, version}. */
export async function changePlan(deps: BillingDeps, tenantId: string, subscriptionId: string, change: { planId: string; version: number }): Promise<SubscriptionView> {
  const subscription = await ownSubscription(deps, tenantId, subscriptionId);
  const [from, to] = await Promise.all([knownPlan(deps, subscription.planId), knownPlan(deps, change.planId)]);
  return deps.workflows.update(tenantId, changePlanUpdate, { ...change, kind: changeKind(from, to) });
}

/** POST /billing/subscriptions {planId}: the plan a trial converts to, chosen at once. */
export async function selectInitialPlan(deps: BillingDeps, tenantId: string, planId: string): Promise<SubscriptionView> {
  await knownPlan(deps, planId);
  return deps.workflows.update(tenantId, selectPlanUpdate, { planId });
}

/** POST /billing/subscriptions/:id/cancel-downgrade {reason}. */
export async function cancelDowngrade(deps: BillingDeps, tenantId: string, subscriptionId: string, reason: string): Promise<SubscriptionView> {
  await ownSubscription(deps, tenantId, subscriptionId);
  return deps.workflows.update(tenantId, cancelDowngradeUpdate, { reason });
}

/** DELETE /billing/subscriptions/:id: at the end of the period (or trial); at once while unpaid. */
export async function cancelSubscription(deps: BillingDeps, tenantId: string, subscriptionId: string): Promise<SubscriptionView> {
  await ownSubscription(deps, tenantId, subscriptionId);
  return deps.workflows.update(tenantId, cancelSubscriptionUpdate);
}
