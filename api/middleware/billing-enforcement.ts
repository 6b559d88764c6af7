import type { Config } from '../../common/config';
import { topics } from '../../services/events/topics';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import { authOf, type AppMiddleware } from '../context';
import type { AnyRoute } from '../http/route-registry';
import {
  checkCreationLimit, checkSubscriptionStatus, creationLimitOf, usageOf, type PlanState, type UsageMetric,
} from '../../services/billing/limits';
import { createTenantEventListener, type TenantEventListener } from '../runtime/tenant-event-listener';
import { PlanCache } from '../runtime/plan-cache';
import type { FeatureFlagCache } from '../runtime/flag-cache';

/** The billing events after which the gateway reloads a tenant's plan info (docs/reference/billing.md#events). */
export const PLAN_CACHE_EVENTS: ReadonlySet<string> = new Set(['billing.plan.changed', 'billing.subscription.changed']);

/**
 * The global feature flag (seeded by migration 0001) that switches the checks below off at run
 * time without a restart, in every gateway once its change is announced (migration 0035). A
 * missing flag enforces: the safe reading of a database without it.
 */
export const BILLING_ENFORCEMENT_FLAG = 'billing.enforcement';

/**
 * The gateway's limit enforcement (docs/reference/billing.md#rule-14 and
 * #rule-15): one router step per bearer route, after the permission check and before the rate
 * limit. The plan and status come from the PlanCache (no I/O when cached); only a route that
 * creates a counted resource reads the tenant's current usage of that metric.
 */
export class LimitEnforcement {
  constructor(
    readonly cache: PlanCache,
    /** Drops a tenant's cached plan info on billing.plan.changed / billing.subscription.changed. */
    readonly listener: TenantEventListener,
    private readonly db: DatabasePool,
    /** The gateway's flag cache: one Map lookup per request. */
    private readonly flags: Pick<FeatureFlagCache, 'isEnabled'>,
    /** Drops what the gateway keeps of a tenant's plan: this cache and the money routes' limits. */
    readonly forget: (tenantId: string) => void,
  ) {}

  /** The router step of a bearer route. */
  step(route: AnyRoute): AppMiddleware {
    const creates = typeof route.billing === 'object' ? route.billing.creates : undefined;
    return async (ctx, next) => {
      if (!this.flags.isEnabled(BILLING_ENFORCEMENT_FLAG, true)) {
        await next();
        return;
      }
      const tenantId = authOf(ctx).tenantId;
      const cached = this.cache.stateOf(tenantId);
      const state = cached instanceof Promise ? await cached : cached;
      // A tenant without a subscription has nothing to enforce (every tenant gets one at creation).
      if (state) {
        checkSubscriptionStatus(state, ctx.method, route.billing);
        if (creates) await this.checkCreation(tenantId, state, creates);
      }
      await next();
    };
  }

  private async checkCreation(tenantId: string, state: PlanState, metric: UsageMetric): Promise<void> {
    const limit = creationLimitOf(state, metric);
    if (!limit) return;
    const current = await usageOf(this.db, tenantId, metric);
    checkCreationLimit(limit, metric, current);
  }
}

/**
 * Null when billing is not deployed (BILLING_ENABLED=false): the router then adds no step at all.
 * Deployed, the step still checks nothing while the flag billing.enforcement is off. `onPlanChange`
 * drops what else the gateway keeps of a tenant's plan (the money routes' limits,
 * services/money/plan-limits.ts) on the same events, so a plan change binds them on every gateway too
 * (test/api/replicas/billing-changes.test.ts).
 */
export function createLimitEnforcement(
  config: Readonly<Config>, db: DatabasePool, flags: Pick<FeatureFlagCache, 'isEnabled'>, logger: Logger,
  onPlanChange: (tenantId: string) => void = () => undefined,
): LimitEnforcement | null {
  if (!config.billingLimits.enabled) return null;
  const cache = new PlanCache({ db, ttlMs: config.billingLimits.cacheTtlMs });
  const forget = (tenantId: string) => {
    cache.invalidateTenant(tenantId);
    onPlanChange(tenantId);
  };
  const listener = createTenantEventListener(config, logger, {
    name: 'plan-cache', topic: topics.billing.name, concerns: (type) => PLAN_CACHE_EVENTS.has(type), invalidate: forget,
  });
  return new LimitEnforcement(cache, listener, db, flags, forget);
}
