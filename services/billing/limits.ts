import { problems, type PlanLimit } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import {
  METRIC_KEYS, adjustUsage, selectPlanState, selectUsageOf, type CountedMetric, type PlanState, type UsageMetric, type UsageValues,
} from '../../db/queries/billing/usage.queries';
import { withTenant } from '../../db/tenant';

export type { PlanState, UsageMetric };

/**
 * What billing's limit enforcement needs to know of a route (docs/reference/billing.md#rule-14, #rule-15): `creates` names the
 * plan limit a new resource counts against; `money` marks the money operations (credit, debit,
 * transfer, hold, confirm, cancel) that a suspension never blocks.
 */
export type RouteBilling = { creates: UsageMetric } | 'money';

const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The tenant's subscription status, plan and limits, with the plan of a pending change, as the gateway's
 * plan cache keeps them; null when the tenant has no subscription.
 */
export function planStateOf(db: DatabasePool, tenantId: string): Promise<PlanState | null> {
  return withTenant(db, tenantId, selectPlanState);
}

/** The tenant's current usage of one metric: what the gateway compares with a creation limit. */
export function usageOf(db: DatabasePool, tenantId: string, metric: UsageMetric): Promise<number> {
  return withTenant(db, tenantId, (tx) => selectUsageOf(tx, metric));
}

/** The money limits of a plan, minor units; 0 is unlimited. */
export interface MoneyLimits {
  planId: string;
  maxTxAmount: number;
  maxBalance: number;
}

/**
 * What a plan that names no money limits allows (docs/decisions/money.md, Plan limits): the catalogue
 * keeps them in the plan's limits beside the resource ceilings, and an operator's plan may leave them out.
 */
const DEFAULT_MONEY_LIMITS = { maxTxAmount: 10_000_000, maxBalance: 100_000_000 } as const;

/**
 * The money limits of the tenant's current plan (not of a pending downgrade: money is never refused
 * for a plan the tenant does not have yet), for money's PlanLimitReader; null without a subscription.
 */
export async function moneyLimitsOf(db: DatabasePool, tenantId: string): Promise<MoneyLimits | null> {
  const state = await planStateOf(db, tenantId);
  if (!state) return null;
  const { maxTxAmount = DEFAULT_MONEY_LIMITS.maxTxAmount, maxBalance = DEFAULT_MONEY_LIMITS.maxBalance } = state.limits;
  return { planId: state.planId, maxTxAmount, maxBalance };
}

/**
 * The status rule of docs/reference/billing.md#rule-14, for one request: active, trialing and past_due
 * continue; suspended blocks mutating requests (402 subscription-suspended) except the money
 * operations; terminated blocks everything (402 subscription-terminated), money included. canceled
 * is not among the blocking states, so it continues. Throws the problem; returns when the request
 * may go on.
 */
export function checkSubscriptionStatus(state: PlanState, method: string, billing: RouteBilling | undefined): void {
  if (state.status === 'terminated') throw problems.subscriptionTerminated();
  if (state.status === 'suspended' && !READ_METHODS.has(method) && billing !== 'money') throw problems.subscriptionSuspended();
}

/** A plan's ceiling for one metric; 0 is unlimited (docs/reference/billing.md#rule-1). */
function ceilingOf(limits: UsageValues, metric: UsageMetric): number {
  return limits[METRIC_KEYS[metric]] ?? 0;
}

/**
 * The creation limit that applies to a metric: the plan's, or, while a downgrade is pending, the
 * stricter of the current and the pending plan's (docs/reference/billing.md#rule-8: a requested downgrade applies the
 * new plan's creation limits at once). Null when unlimited.
 */
export function creationLimitOf(state: PlanState, metric: UsageMetric): { allowed: number; planId: string } | null {
  const current = ceilingOf(state.limits, metric);
  const candidates = [{ allowed: current, planId: state.planId }];
  if (state.pendingKind === 'downgrade' && state.pendingLimits && state.pendingPlanId) {
    candidates.push({ allowed: ceilingOf(state.pendingLimits, metric), planId: state.pendingPlanId });
  }
  const enforced = candidates.filter((candidate) => candidate.allowed > 0);
  if (enforced.length === 0) return null;
  return enforced.reduce((strictest, candidate) => (candidate.allowed < strictest.allowed ? candidate : strictest));
}

/**
 * docs/reference/billing.md#rule-15: usage at or above a non-zero limit refuses the creation, with its limit object;
 * `requested` resources created at once (a data create with nested records) are refused when they
 * would pass it together.
 */
export function checkCreationLimit(limit: { allowed: number; planId: string }, metric: UsageMetric, current: number, requested = 1): void {
  if (current + requested <= limit.allowed) return;
  const detail: PlanLimit = { resource: metric, allowed: limit.allowed, current, planId: limit.planId };
  throw requested === 1 ? problems.planLimitExceeded(detail)
    : problems.planLimitExceeded(detail, {}, `The plan ${limit.planId} allows ${limit.allowed} ${metric}; ${current} in use, ${requested} more asked for`);
}

/**
 * docs/reference/billing.md#rule-15 inside a domain's own transaction, for a creation whose count must not race another (a
 * module install, which holds the tenant's RBAC lock): the plan and the usage are read in the
 * transaction that then counts the new resource.
 */
export async function checkCreationLimitIn(tx: DatabaseTransactionConnection, metric: UsageMetric): Promise<void> {
  const state = await selectPlanState(tx);
  const limit = state && creationLimitOf(state, metric);
  if (limit) checkCreationLimit(limit, metric, await selectUsageOf(tx, metric));
}

/**
 * docs/reference/billing.md#rule-15 for a creation that holds no lock of its own (a data record, `count` of them at once): the
 * counter is raised first, which holds its row lock until the transaction ends, so concurrent
 * creations of the tenant are counted one after the other and none passes a ceiling another just
 * reached; the usage compared is the one before this creation. A refusal rolls the count back with
 * the transaction.
 */
export async function countCreationIn(tx: DatabaseTransactionConnection, metric: CountedMetric, enforce: boolean, count = 1): Promise<void> {
  await adjustUsage(tx, metric, count);
  if (!enforce) return;
  const state = await selectPlanState(tx);
  const limit = state && creationLimitOf(state, metric);
  if (limit) checkCreationLimit(limit, metric, await selectUsageOf(tx, metric) - count, count);
}
