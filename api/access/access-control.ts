import type { Config } from '../../common/config';
import { createKafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import { PermissionCache } from './permission-cache';
import { PermissionResolver } from './permission-resolver';
import { RoleChangeListener } from './role-change-listener';
import { TenantVersionReader } from './tenant-versions';

/** The gateway's permission checking: the resolver the routes use, its cache, and the cache's Kafka invalidation. */
export interface AccessControl {
  resolver: PermissionResolver;
  cache: PermissionCache;
  roleChanges: RoleChangeListener;
}

export function createAccessControl(config: Readonly<Config>, db: DatabasePool, logger: Logger): AccessControl {
  const cache = new PermissionCache({
    db, versions: new TenantVersionReader(db), ttlMs: config.rbac.cacheTtlMs, maxEntries: config.rbac.cacheMaxEntries,
  });
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: `${config.kafka.clientId}-permission-cache` }, logger);
  return { resolver: new PermissionResolver(cache), cache, roleChanges: new RoleChangeListener(kafka, cache, logger) };
}
