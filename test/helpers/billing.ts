import { sql, type DatabasePool } from '../../db/pool';
import type { TestGateway } from './app';

/** Helpers for the billing limit tests: subscription states are set directly, as the billing workflow would. */

export interface SubscriptionChange {
  status?: 'trialing' | 'active' | 'past_due' | 'suspended' | 'terminated' | 'canceled';
  planId?: string;
  /** pending_change as the subscription workflow writes it for a downgrade; null clears it. */
  pendingChange?: { planId: string; kind: 'downgrade' | 'upgrade' } | null;
}

/** Changes the tenant's subscription as the owner role and drops the gateway's cached copy (as the billing events do). */
export async function setSubscription(gateway: TestGateway, owner: DatabasePool, tenantId: string, change: SubscriptionChange): Promise<void> {
  const pending = change.pendingChange === undefined ? sql.fragment`pending_change`
    : change.pendingChange === null ? sql.fragment`NULL`
      : sql.fragment`${sql.jsonb({ ...change.pendingChange, requestedAt: new Date().toISOString(), effectiveAt: new Date().toISOString() })}`;
  await owner.query(sql.unsafe`
    UPDATE subscriptions SET status = coalesce(${change.status ?? null}, status), plan_id = coalesce(${change.planId ?? null}, plan_id),
           pending_change = ${pending}, version = version + 1, updated_at = now()
    WHERE tenant_id = ${tenantId}
  `);
  gateway.runtime.gateway.limits?.cache.invalidateTenant(tenantId);
}
