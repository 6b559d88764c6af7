import { ApplicationFailure } from '@temporalio/activity';
import { recordAudit } from '../../services/audit/writer';
import { enqueueEvent } from '../../services/events/publish';
import type { Logger } from '../../common/logger';
import { activityContext } from '../../common/temporal/activity-context';
import type { DatabasePool } from '../../db/pool';
import { selectOwnerEmails } from '../../db/queries/billing/lifecycle.queries';
import { selectUsage, type UsageValues } from '../../db/queries/billing/usage.queries';
import { selectPlan } from '../../db/queries/billing/plans.queries';
import { selectSubscription, updateSubscriptionMirror } from '../../db/queries/billing/subscriptions.queries';
import { withTenant } from '../../db/tenant';
import type { SubscriptionStatus, SubscriptionView } from '../../workflows/billing/billing.messages';

export interface BillingDeps {
  /** The owner role's pool: the workflow is the one writer of subscriptions (migration 0016). */
  ownerPool: DatabasePool;
  logger: Logger;
}

/** How a plan moved, for billing.plan.changed. */
export type PlanChangeKind = 'upgrade' | 'downgrade_scheduled' | 'downgrade_applied' | 'downgrade_canceled' | 'selected' | 'provider_sync';

/** One change of the workflow's state, written to the mirror with its event and audit record. */
export interface MirrorChange {
  subscription: SubscriptionView;
  previous: { status: SubscriptionStatus; planId: string; version: number };
  /** Why it changed (`payment_succeeded`, `dunning_suspended`, `plan_changed` ...); in the event and the audit record. */
  reason: string;
  planChange?: { kind: PlanChangeKind; fromPlanId: string; toPlanId: string; effectiveAt: string };
  /** A free-text reason the caller gave (cancel-downgrade). */
  note?: string;
}

export interface PlanTerms {
  price: number;
  interval: 'monthly' | 'yearly';
}

/**
 * What a downgrade's 30-day rule compares with the new plan: the resources a tenant keeps (members,
 * records, stored bytes, modules). eventsPerDay is a daily rate, not something held, so it is left out.
 */
const STORED_RESOURCES: readonly (keyof UsageValues)[] = ['users', 'records', 'storageBytes', 'modules'];

/** The actor of the request behind the change (an Update's sender), if a person caused it. */
function actorOf(): { actorId: string | null; traceId: string | undefined } {
  const context = activityContext();
  return { actorId: context.actorId ?? null, traceId: context.traceId };
}

export function createBillingActivities({ ownerPool, logger }: BillingDeps) {
  return {
    /**
     * The subscription row written at registration. The workflow may be started a moment before the
     * registration commits, so a missing row is retried; if it never appears (the registration
     * rolled back) the workflow gives up after its schedule-to-close timeout and ends.
     */
    async loadSubscription(tenantId: string): Promise<SubscriptionView> {
      const row = await withTenant(ownerPool, tenantId, (tx) => selectSubscription(tx, tenantId));
      if (!row) throw ApplicationFailure.retryable(`tenant ${tenantId} has no subscription (yet)`, 'subscription-not-found');
      const { statusChangedAt: _statusChangedAt, ...subscription } = row;
      return subscription;
    },

    async planTerms(planId: string): Promise<PlanTerms> {
      const plan = await selectPlan(ownerPool, planId);
      if (!plan) throw ApplicationFailure.nonRetryable(`plan ${planId} does not exist`, 'not-found');
      return { price: plan.price, interval: plan.interval };
    },

    /** The addresses billing notices go to: the tenant's owners. */
    async ownerEmails(tenantId: string): Promise<string[]> {
      return withTenant(ownerPool, tenantId, (tx) => selectOwnerEmails(tx, tenantId));
    },

    /**
     * Whether the tenant holds more than a plan allows of any stored resource (document 1: 0 is
     * unlimited), by the same usage the gateway's limit checks read.
     */
    async isOverPlanLimits(tenantId: string, planId: string): Promise<boolean> {
      const plan = await selectPlan(ownerPool, planId);
      if (!plan) throw ApplicationFailure.nonRetryable(`plan ${planId} does not exist`, 'not-found');
      const usage = await withTenant(ownerPool, tenantId, (tx) => selectUsage(tx));
      return STORED_RESOURCES.some((resource) => plan.limits[resource] > 0 && usage[resource] > plan.limits[resource]);
    },

    /**
     * Mirrors the workflow's state into PostgreSQL with billing.subscription.changed (and
     * billing.plan.changed for a plan move) and an audit record, in one transaction. A version the
     * row already has (a retried activity) writes nothing, so each change is published once.
     */
    async mirrorSubscription(change: MirrorChange): Promise<boolean> {
      const { subscription: s, previous } = change;
      const { actorId, traceId } = actorOf();
      const written = await withTenant(ownerPool, s.tenantId, async (tx) => {
        if (!(await updateSubscriptionMirror(tx, s))) return false;
        const changedAt = new Date().toISOString();
        await enqueueEvent(tx, {
          tenantId: s.tenantId, type: 'billing.subscription.changed', source: 'billing', key: s.tenantId, traceId,
          data: {
            subscription_id: s.id, tenant_id: s.tenantId, plan_id: s.planId, status: s.status, previous_status: previous.status,
            version: s.version, cancel_at_period_end: s.cancelAtPeriodEnd, pending_change: s.pendingChange,
            current_period_end: s.currentPeriodEnd, reason: change.reason, changed_at: changedAt,
          },
        });
        if (change.planChange) {
          const plan = change.planChange;
          await enqueueEvent(tx, {
            tenantId: s.tenantId, type: 'billing.plan.changed', source: 'billing', key: s.tenantId, traceId,
            data: {
              subscription_id: s.id, tenant_id: s.tenantId, change: plan.kind, previous_plan_id: plan.fromPlanId,
              plan_id: plan.toPlanId, effective_at: plan.effectiveAt, version: s.version, changed_at: changedAt,
            },
          });
        }
        await recordAudit(tx, {
          tenantId: s.tenantId, source: 'billing', traceId, actorId,
          action: change.planChange ? 'billing.plan.changed' : 'billing.subscription.changed',
          entityType: 'subscription', entityId: s.id,
          before: { status: previous.status, planId: previous.planId, version: previous.version },
          after: { status: s.status, planId: s.planId, version: s.version, pendingChange: s.pendingChange, cancelAtPeriodEnd: s.cancelAtPeriodEnd },
          meta: { reason: change.reason, ...(change.planChange ? { planChange: change.planChange } : {}), ...(change.note ? { note: change.note } : {}) },
        });
        return true;
      });
      logger.info({ tenantId: s.tenantId, status: s.status, version: s.version, reason: change.reason, written }, 'subscription mirrored');
      return written;
    },
  };
}

export type BillingActivities = ReturnType<typeof createBillingActivities>;
