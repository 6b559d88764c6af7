import type { Config } from '../../common/config';
import { topics } from '../../services/events/topics';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import { PermissionCache } from './permission-cache';
import { PermissionResolver } from './permission-resolver';
import { TenantVersionReader } from './tenant-versions';
import { createTenantEventListener, type TenantEventListener } from './tenant-event-listener';

export const ROLE_CHANGED = 'auth.role.changed';

/** The gateway's permission checking: the resolver the routes use, its cache, and the cache's Kafka invalidation. */
export interface AccessControl {
  resolver: PermissionResolver;
  cache: PermissionCache;
  /** The tenants' RBAC versions the cache checks on every request, kept fresh by the runtime's `announcements`. */
  versions: TenantVersionReader;
  /**
   * Drops a tenant's cached permissions on auth.role.changed (docs/reference/gateway.md#events): only an early
   * invalidation, since the cache checks the tenant's RBAC version on every request.
   */
  roleChanges: TenantEventListener;
}

export function createAccessControl(config: Readonly<Config>, db: DatabasePool, logger: Logger): AccessControl {
  const versions = new TenantVersionReader(db);
  const cache = new PermissionCache({ db, versions, ttlMs: config.rbac.cacheTtlMs, maxEntries: config.rbac.cacheMaxEntries });
  const roleChanges = createTenantEventListener(config, logger, {
    name: 'permission-cache', topic: topics.auth.name,
    concerns: (type) => type === ROLE_CHANGED, invalidate: (tenantId) => cache.invalidateTenant(tenantId), mayWait: true,
  });
  return { resolver: new PermissionResolver(cache), cache, versions, roleChanges };
}
