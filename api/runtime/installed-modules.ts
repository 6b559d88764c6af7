import type { DatabasePool } from '../../db/pool';
import { activeModuleSlugs } from '../../services/modules/module-registry';

export interface InstalledModulesOptions {
  db: DatabasePool;
  /** How long a tenant's set may be reused without news of a change (0: never). */
  ttlMs: number;
  /** The most tenants held; past it the least recently loaded is dropped. */
  maxTenants: number;
  now?: () => number;
}

interface Entry {
  slugs: ReadonlySet<string>;
  loadedAt: number;
}

/**
 * The gateway's answer to "is this module installed and active for this tenant"
 * (docs/reference/gateway.md#rule-6), asked on every request of a module route. A tenant's set of active slugs is
 * loaded in one query and reused for a short TTL, so the request path usually does no I/O. A change
 * made through this process drops the tenant's set as it commits; a change made through another
 * gateway process drops it when its module.registry.* event arrives from Kafka
 * (the module-cache TenantEventListener); the TTL bounds what a lost event can cost. Concurrent misses of a tenant
 * share one load, and a load that a change overtook is answered but not kept.
 */
export class InstalledModules {
  private readonly tenants = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<ReadonlySet<string>>>();
  private readonly now: () => number;
  readonly stats = { hits: 0, misses: 0, invalidations: 0 };

  constructor(private readonly options: InstalledModulesOptions) {
    this.now = options.now ?? Date.now;
  }

  async isActive(tenantId: string, slug: string): Promise<boolean> {
    const entry = this.tenants.get(tenantId);
    if (entry && this.now() - entry.loadedAt < this.options.ttlMs) {
      this.stats.hits += 1;
      return entry.slugs.has(slug);
    }
    this.stats.misses += 1;
    return (await this.load(tenantId)).has(slug);
  }

  /** Drops what is known of a tenant, a load in flight included: the next request reads afresh. */
  invalidate(tenantId: string): void {
    const dropped = this.tenants.delete(tenantId);
    if (this.loading.delete(tenantId) || dropped) this.stats.invalidations += 1;
  }

  isCached(tenantId: string): boolean {
    return this.tenants.has(tenantId);
  }

  private load(tenantId: string): Promise<ReadonlySet<string>> {
    const inFlight = this.loading.get(tenantId);
    if (inFlight) return inFlight;
    const loading = activeModuleSlugs(this.options.db, tenantId)
      .then((slugs) => {
        const set: ReadonlySet<string> = new Set(slugs);
        // Kept only if no change dropped this load while it ran.
        if (this.loading.get(tenantId) === loading) this.keep(tenantId, set);
        return set;
      })
      .finally(() => {
        if (this.loading.get(tenantId) === loading) this.loading.delete(tenantId);
      });
    this.loading.set(tenantId, loading);
    return loading;
  }

  private keep(tenantId: string, slugs: ReadonlySet<string>): void {
    this.tenants.delete(tenantId);
    this.tenants.set(tenantId, { slugs, loadedAt: this.now() });
    // A Map iterates in insertion order: the first key is the least recently loaded tenant.
    if (this.tenants.size > this.options.maxTenants) this.tenants.delete(this.tenants.keys().next().value!);
  }
}
