import { recordAudit } from '../audit/writer';
import { enqueueEvent } from '../events/publish';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';
import type { DatabasePool } from '../../db/pool';
import { selectUsage, type UsageValues } from '../../db/queries/billing/usage.queries';
import { selectPlan, type PlanRow } from '../../db/queries/billing/plans.queries';
import { selectSubscription, updateSubscriptionMirror, type SubscriptionRow } from '../../db/queries/billing/subscriptions.queries';
import { selectRoleHolderEmails } from '../../db/queries/identity/members.queries';
import { withTenant } from '../../db/tenant';
import type { SubscriptionStatus, SubscriptionView } from '../../workflows/billing/billing.messages';

/**
 * What the subscription workflow reads and writes of PostgreSQL: the mirror row it is the one
 * writer of (migration 0025), the plan terms and usage its rules compare, and the owners it mails.
 */
export interface SubscriptionMirrorDeps {
  /**
   * The application role (row-level security applies): every read and the mirror write run in the
   * subscription's tenant transaction.
   */
  appPool: DatabasePool;
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

/** The person behind a change (the sender of the Update that caused it) and the request's trace. */
export interface ChangeActor {
  actorId: string | null;
  traceId: string | undefined;
}

/**
 * What a downgrade's 30-day rule compares with the new plan: the resources a tenant keeps (members,
 * records, stored bytes, modules). eventsPerDay is a daily rate, not something held, so it is left out.
 */
const STORED_RESOURCES: readonly (keyof UsageValues)[] = ['users', 'records', 'storageBytes', 'modules'];

/** The subscription (docs/reference/billing.md, Resources): the mirror row without the bookkeeping column. */
export function toSubscriptionView({ statusChangedAt: _statusChangedAt, ...view }: SubscriptionRow): SubscriptionView {
  return view;
}

async function knownPlan({ appPool }: SubscriptionMirrorDeps, planId: string): Promise<PlanRow> {
  const plan = await selectPlan(appPool, planId);
  if (!plan) throw problems.notFound(`plan ${planId}`);
  return plan;
}

/** The tenant's subscription row; undefined while the registration that writes it has not committed. */
export async function loadSubscription({ appPool }: SubscriptionMirrorDeps, tenantId: string): Promise<SubscriptionView | undefined> {
  const row = await withTenant(appPool, tenantId, (tx) => selectSubscription(tx, tenantId));
  return row ? toSubscriptionView(row) : undefined;
}

export async function planTerms(deps: SubscriptionMirrorDeps, planId: string): Promise<PlanTerms> {
  const plan = await knownPlan(deps, planId);
  return { price: plan.price, interval: plan.interval };
}

/** The addresses billing notices go to: the tenant's owners. */
export async function ownerEmails({ appPool }: SubscriptionMirrorDeps, tenantId: string): Promise<string[]> {
  return withTenant(appPool, tenantId, (tx) => selectRoleHolderEmails(tx, tenantId, ['owner']));
}

/**
 * Whether the tenant holds more than a plan allows of any stored resource (docs/reference/billing.md#rule-1: 0 is
 * unlimited), by the same usage the gateway's limit checks read.
 */
export async function isOverPlanLimits(deps: SubscriptionMirrorDeps, tenantId: string, planId: string): Promise<boolean> {
  const plan = await knownPlan(deps, planId);
  const usage = await withTenant(deps.appPool, tenantId, (tx) => selectUsage(tx));
  return STORED_RESOURCES.some((resource) => plan.limits[resource] > 0 && usage[resource] > plan.limits[resource]);
}

/**
 * Mirrors the workflow's state into PostgreSQL with billing.subscription.changed (and
 * billing.plan.changed for a plan move) and an audit record, in one transaction. A version the
 * row already has (a retried activity) writes nothing, so each change is published once.
 */
export async function mirrorSubscription(
  { appPool, logger }: SubscriptionMirrorDeps, change: MirrorChange, { actorId, traceId }: ChangeActor,
): Promise<boolean> {
  const { subscription: s, previous } = change;
  const written = await withTenant(appPool, s.tenantId, async (tx) => {
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
}
