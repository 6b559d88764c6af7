import type { CommonQueryMethods } from 'slonik';
import { selectPlan, selectPlans, type PlanRow } from '../../db/queries/billing/plans.queries';

/**
 * A plan (docs/reference/billing.md, Resources): `limits` has exactly users, records, storageBytes,
 * eventsPerDay and modules. The catalogue keeps the money limits (docs/reference/billing.md#rule-1) in
 * the same jsonb; the API answers them in a member of their own, so `limits` stays as the reference shows it.
 */
export interface PlanView extends Omit<PlanRow, 'limits'> {
  limits: Omit<PlanRow['limits'], 'maxTxAmount' | 'maxBalance'>;
  moneyLimits: Pick<PlanRow['limits'], 'maxTxAmount' | 'maxBalance'>;
}

export function planView(plan: PlanRow): PlanView {
  const { maxTxAmount, maxBalance, ...limits } = plan.limits;
  return { ...plan, limits, moneyLimits: { maxTxAmount, maxBalance } };
}

/** The catalogue, cheapest first. */
export async function listPlans(db: CommonQueryMethods): Promise<PlanView[]> {
  return (await selectPlans(db)).map(planView);
}

export async function findPlan(db: CommonQueryMethods, planId: string): Promise<PlanView | null> {
  const plan = await selectPlan(db, planId);
  return plan && planView(plan);
}
