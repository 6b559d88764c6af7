import type { DatabasePool } from '../../db/pool';
import { versionedGrants } from '../../services/access/grants';
import type { TenantVersionReader } from './tenant-versions';

/** What a user may do in a tenant right now. */
export interface Grants {
  /** The roles the user holds now (not the token's list, which is as old as the token). */
  roles: readonly string[];
  /** The union of the roles' keys (wildcards included), without archived keys. */
  permissions: ReadonlySet<string>;
  /** The tenant's archived keys: they grant nothing, not even through a wildcard. */
  archived: ReadonlySet<string>;
}

interface TenantEntry {
  /** The tenant's RBAC version the entry was loaded at. */
  version: number;
  loadedAt: number;
  archived: ReadonlySet<string>;
  users: Map<string, { roles: readonly string[]; permissions: ReadonlySet<string> }>;
}

export interface PermissionCacheOptions {
  db: DatabasePool;
  versions: TenantVersionReader;
  /** How long a tenant's entry may be reused while its version does not change (0: never). */
  ttlMs: number;
  /** The most users held across tenants; past it the least recently loaded tenants are dropped. */
  maxEntries: number;
  now?: () => number;
}

/**
 * The gateway's permission cache, per tenant and user (docs/reference/access.md#rule-4). Every lookup
 * first asks for the tenant's RBAC version (TenantVersionReader: from memory while the gateway
 * hears the database announce every bump, otherwise one query shared by concurrent requests), which
 * the database bumps in the same transaction as any change to the tenant's roles, assignments or
 * registry; an entry loaded at an older version is never used. So a change takes effect on the
 * next request (one made elsewhere than this process: as soon as its announcement arrives, see
 * tenant-versions.ts) even when the auth.role.changed event cannot arrive (Kafka down, consumer stopped);
 * the event only drops the tenant's entries early, and the TTL bounds how long anything is reused.
 * A miss reads the user's roles, their keys and the tenant's archived keys in one transaction.
 */
export class PermissionCache {
  private readonly tenants = new Map<string, TenantEntry>();
  private entries = 0;
  private readonly now: () => number;
  readonly stats = { hits: 0, misses: 0, invalidations: 0 };

  constructor(private readonly options: PermissionCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  async grantsOf(tenantId: string, userId: string): Promise<Grants> {
    const version = await this.options.versions.read(tenantId);
    const tenant = this.usableEntry(tenantId, version);
    const user = tenant?.users.get(userId);
    if (tenant && user) {
      this.stats.hits += 1;
      return { ...user, archived: tenant.archived };
    }
    this.stats.misses += 1;
    return this.load(tenantId, userId);
  }

  /** Drops a tenant's entries (on auth.role.changed); the next request of the tenant loads afresh. */
  invalidateTenant(tenantId: string): void {
    const entry = this.tenants.get(tenantId);
    if (!entry) return;
    this.drop(tenantId, entry);
    this.stats.invalidations += 1;
  }

  isCached(tenantId: string): boolean {
    return this.tenants.has(tenantId);
  }

  /** An entry at least as new as the version just read, and within its TTL; a stale one is dropped. */
  private usableEntry(tenantId: string, version: number): TenantEntry | undefined {
    const entry = this.tenants.get(tenantId);
    if (!entry) return undefined;
    if (entry.version >= version && this.now() - entry.loadedAt < this.options.ttlMs) return entry;
    this.drop(tenantId, entry);
    return undefined;
  }

  private async load(tenantId: string, userId: string): Promise<Grants> {
    const loaded = await versionedGrants(this.options.db, tenantId, userId);
    const user = { roles: loaded.grants.roles, permissions: new Set(loaded.grants.permissions) };
    let entry = this.tenants.get(tenantId);
    if (!entry || entry.version < loaded.version) {
      if (entry) this.drop(tenantId, entry);
      entry = { version: loaded.version, loadedAt: this.now(), archived: new Set(loaded.archived), users: new Map() };
      this.tenants.set(tenantId, entry);
    }
    // A load that raced a newer one is answered but not kept: the entry stays at the newer version.
    if (entry.version === loaded.version && !entry.users.has(userId)) {
      entry.users.set(userId, user);
      this.entries += 1;
      this.evictOverflow();
    }
    return { ...user, archived: new Set(loaded.archived) };
  }

  private drop(tenantId: string, entry: TenantEntry): void {
    this.tenants.delete(tenantId);
    this.entries -= entry.users.size;
  }

  private evictOverflow(): void {
    for (const [tenantId, entry] of this.tenants) {
      if (this.entries <= this.options.maxEntries) return;
      this.drop(tenantId, entry);
    }
  }
}
