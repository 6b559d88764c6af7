import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'past_due', 'suspended', 'terminated', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/**
 * A plan change waiting for the next billing cycle (docs/reference/billing.md#rule-8: a downgrade takes effect then). The
 * gateway's limit enforcement reads this shape: it applies the new plan's creation limits at once.
 */
export const pendingChange = z.object({
  planId: z.string(),
  kind: z.literal('downgrade'),
  requestedAt: z.string(),
  effectiveAt: z.string(),
});
export type PendingChange = z.infer<typeof pendingChange>;

/** The subscription of docs/reference/billing.md (Resources), plus when its status last changed (migration 0016). */
export const subscriptionRow = z.object({
  id: z.string(),
  tenantId: z.string(),
  planId: z.string(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  version: z.number(),
  trialEndsAt: z.string().nullable(),
  currentPeriodStart: z.string(),
  currentPeriodEnd: z.string(),
  cancelAtPeriodEnd: z.boolean(),
  pendingChange: pendingChange.nullable(),
  statusChangedAt: z.string(),
});
export type SubscriptionRow = z.infer<typeof subscriptionRow>;

const columns = sql.fragment`
  id, tenant_id AS "tenantId", plan_id AS "planId", status, version, trial_ends_at AS "trialEndsAt",
  current_period_start AS "currentPeriodStart", current_period_end AS "currentPeriodEnd",
  cancel_at_period_end AS "cancelAtPeriodEnd", pending_change AS "pendingChange", status_changed_at AS "statusChangedAt"
`;

export interface NewTrial {
  id: string;
  tenantId: string;
  planId: string;
  trialDays: number;
}

/**
 * Every new tenant starts trialing (docs/reference/billing.md#rule-3: never an undefined subscription state); the first
 * period is the trial itself.
 */
export function insertTrialSubscription(tx: DatabaseTransactionConnection, trial: NewTrial): Promise<SubscriptionRow> {
  return tx.one(sql.type(subscriptionRow)`
    INSERT INTO subscriptions (id, tenant_id, plan_id, status, trial_ends_at, current_period_start, current_period_end)
    VALUES (${trial.id}, ${trial.tenantId}, ${trial.planId}, 'trialing',
            now() + make_interval(days => ${trial.trialDays}), now(), now() + make_interval(days => ${trial.trialDays}))
    RETURNING ${columns}
  `);
}

/** The subscription of the transaction's tenant (named explicitly as well). */
export function selectSubscription(db: CommonQueryMethods, tenantId: string): Promise<SubscriptionRow | null> {
  return db.maybeOne(sql.type(subscriptionRow)`SELECT ${columns} FROM subscriptions WHERE tenant_id = ${tenantId}`);
}

/** The mirror of the workflow's state, as its activity writes it. */
export type SubscriptionMirror = Omit<SubscriptionRow, 'statusChangedAt'>;

/**
 * Writes the workflow's state (application role, in the tenant's transaction). Only a newer version is
 * written: a retried activity, or a late write of an older state, changes nothing and answers false,
 * so its event and audit record are written exactly once.
 */
export async function updateSubscriptionMirror(tx: DatabaseTransactionConnection, state: SubscriptionMirror): Promise<boolean> {
  const result = await tx.query(sql.unsafe`
    UPDATE subscriptions SET
      plan_id = ${state.planId}, status = ${state.status}, version = ${state.version},
      trial_ends_at = ${state.trialEndsAt}::timestamptz,
      current_period_start = ${state.currentPeriodStart}::timestamptz, current_period_end = ${state.currentPeriodEnd}::timestamptz,
      cancel_at_period_end = ${state.cancelAtPeriodEnd},
      pending_change = ${state.pendingChange ? sql.jsonb(state.pendingChange) : null}::jsonb,
      status_changed_at = CASE WHEN status = ${state.status} THEN status_changed_at ELSE now() END,
      updated_at = now()
    WHERE tenant_id = ${state.tenantId} AND id = ${state.id} AND version < ${state.version}
  `);
  return result.rowCount === 1;
}
