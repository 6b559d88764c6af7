/**
 * The per-tenant breaker of docs/reference/gateway.md#rule-15: a tenant whose requests fail more than half the time over
 * 60 s is isolated (its requests answer 503 at once) while every other tenant is served, so one
 * tenant's poisoned data or runaway client cannot open the circuit for all. Counts are kept in
 * buckets of a tenth of the window; a tenant with fewer than minRequests in the window is never
 * judged, so a single failed request is not a 100 % error rate. After openMs the tenant is let
 * through again with a clean count.
 */
export interface TenantBreakerOptions {
  errorRate: number;
  windowMs: number;
  minRequests: number;
  openMs: number;
  now?: () => number;
}

interface Bucket {
  start: number;
  requests: number;
  failures: number;
}

const BUCKETS = 10;

export class TenantBreakers {
  private readonly counts = new Map<string, Bucket[]>();
  private readonly isolatedUntil = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: TenantBreakerOptions) {
    this.now = options.now ?? Date.now;
  }

  isIsolated(tenantId: string): boolean {
    const until = this.isolatedUntil.get(tenantId);
    if (until === undefined) return false;
    if (this.now() < until) return true;
    this.isolatedUntil.delete(tenantId);
    return false;
  }

  /** How many tenants are isolated now (for /metrics; a label per tenant would be unbounded). */
  isolatedCount(): number {
    return [...this.isolatedUntil.keys()].filter((tenantId) => this.isIsolated(tenantId)).length;
  }

  record(tenantId: string, failed: boolean): void {
    const now = this.now();
    const bucketMs = this.options.windowMs / BUCKETS;
    const start = now - (now % bucketMs);
    const buckets = (this.counts.get(tenantId) ?? []).filter((bucket) => now - bucket.start < this.options.windowMs);
    let current = buckets.at(-1);
    if (current?.start !== start) {
      current = { start, requests: 0, failures: 0 };
      buckets.push(current);
    }
    current.requests += 1;
    if (failed) current.failures += 1;
    this.counts.set(tenantId, buckets);

    if (!failed) return;
    const requests = buckets.reduce((sum, bucket) => sum + bucket.requests, 0);
    const failures = buckets.reduce((sum, bucket) => sum + bucket.failures, 0);
    if (requests >= this.options.minRequests && failures / requests > this.options.errorRate) {
      this.isolatedUntil.set(tenantId, now + this.options.openMs);
      this.counts.delete(tenantId);
    }
  }

  /** Drops the counts of tenants idle for a whole window, so the map does not grow with every tenant ever seen. */
  sweep(): void {
    const now = this.now();
    for (const [tenantId, buckets] of this.counts) {
      if (!buckets.some((bucket) => now - bucket.start < this.options.windowMs)) this.counts.delete(tenantId);
    }
  }
}
