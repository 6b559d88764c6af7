import type { DatabasePool } from '../../db/pool';
import { planStateOf, type PlanState } from '../../services/billing/limits';

interface Entry {
  /** null: the tenant has no subscription (nothing to enforce). */
  state: PlanState | null;
  expiresAt: number;
}

export interface PlanCacheOptions {
  db: DatabasePool;
  /** BILLING_CACHE_TTL (docs/reference/billing.md#limits: 15 minutes). */
  ttlMs: number;
  /** Tenants held at most; past it the longest-held are dropped. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * The gateway's per-tenant plan and subscription status (docs/reference/billing.md#rule-13).
 * A fresh entry is answered synchronously, so a cached request costs one Map lookup; a miss reads
 * subscription and plans in one query, shared by every request of the tenant that arrives meanwhile.
 * `billing.plan.changed` and `billing.subscription.changed` drop the tenant's entry
 * (the plan-cache TenantEventListener); the TTL bounds staleness when an event is missed. A load that started
 * before an invalidation is answered to the requests that were waiting for it but not kept, and no request
 * arriving after the invalidation joins it, so an event is never undone by a slow read.
 */
export class PlanCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<PlanState | null>>();
  /** Bumped per tenant on invalidation; a load keeps its result only if it saw the same value. */
  private readonly generations = new Map<string, number>();
  private readonly now: () => number;
  private readonly maxEntries: number;
  readonly stats = { hits: 0, misses: 0, invalidations: 0 };

  constructor(private readonly options: PlanCacheOptions) {
    this.now = options.now ?? Date.now;
    this.maxEntries = options.maxEntries ?? 100_000;
  }

  /** The tenant's plan state: the value itself when cached, else a promise of it. */
  stateOf(tenantId: string): PlanState | null | Promise<PlanState | null> {
    const entry = this.entries.get(tenantId);
    if (entry && entry.expiresAt > this.now()) {
      this.stats.hits += 1;
      return entry.state;
    }
    this.stats.misses += 1;
    return this.loading.get(tenantId) ?? this.load(tenantId);
  }

  invalidateTenant(tenantId: string): void {
    this.entries.delete(tenantId);
    // A request after the invalidation must not share a read that began before it: it starts its own.
    this.loading.delete(tenantId);
    this.generations.set(tenantId, (this.generations.get(tenantId) ?? 0) + 1);
    this.stats.invalidations += 1;
  }

  isCached(tenantId: string): boolean {
    return this.entries.has(tenantId);
  }

  private load(tenantId: string): Promise<PlanState | null> {
    const generation = this.generations.get(tenantId) ?? 0;
    const loading = planStateOf(this.options.db, tenantId)
      .then((state) => {
        if ((this.generations.get(tenantId) ?? 0) === generation) this.keep(tenantId, state);
        return state;
      })
      .finally(() => {
        if (this.loading.get(tenantId) === loading) this.loading.delete(tenantId);
      });
    this.loading.set(tenantId, loading);
    return loading;
  }

  private keep(tenantId: string, state: PlanState | null): void {
    this.entries.delete(tenantId);
    this.entries.set(tenantId, { state, expiresAt: this.now() + this.options.ttlMs });
    // Maps iterate in insertion order, so the first key is the one held longest.
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
