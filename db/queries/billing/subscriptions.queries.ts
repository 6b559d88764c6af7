import { sql, type DatabaseTransactionConnection } from '../../pool';

export interface NewTrial {
  id: string;
  tenantId: string;
  planId: string;
  trialDays: number;
}

/**
 * Every new tenant starts trialing (document 1: never an undefined subscription state); the first
 * period is the trial itself.
 */
export async function insertTrialSubscription(tx: DatabaseTransactionConnection, trial: NewTrial): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO subscriptions (id, tenant_id, plan_id, status, trial_ends_at, current_period_start, current_period_end)
    VALUES (${trial.id}, ${trial.tenantId}, ${trial.planId}, 'trialing',
            now() + make_interval(days => ${trial.trialDays}), now(), now() + make_interval(days => ${trial.trialDays}))
  `);
}
