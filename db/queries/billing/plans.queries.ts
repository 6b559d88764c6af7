import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql } from '../../pool';

/**
 * The plan catalogue (migration 0002, seeded as docs/reference/billing.md#limits lists them): read by everyone, written by
 * operators only. Limits of 0 mean unlimited.
 */
export const planLimits = z.object({
  users: z.number(),
  records: z.number(),
  storageBytes: z.number(),
  eventsPerDay: z.number(),
  modules: z.number(),
  maxTxAmount: z.number().optional(),
  maxBalance: z.number().optional(),
});

export const planRow = z.object({
  id: z.string(),
  name: z.string(),
  interval: z.enum(['monthly', 'yearly']),
  price: z.number(),
  currency: z.string(),
  limits: planLimits,
  features: z.array(z.string()),
});
export type PlanRow = z.infer<typeof planRow>;

const columns = sql.fragment`id, name, interval, price, currency, limits, features`;

/** Cheapest first, so a list reads as an upgrade path. */
export function selectPlans(db: CommonQueryMethods): Promise<readonly PlanRow[]> {
  return db.any(sql.type(planRow)`SELECT ${columns} FROM plans ORDER BY price, id`);
}

export function selectPlan(db: CommonQueryMethods, planId: string): Promise<PlanRow | null> {
  return db.maybeOne(sql.type(planRow)`SELECT ${columns} FROM plans WHERE id = ${planId}`);
}
