import type { Config } from '../../common/config';
import { topics } from '../../services/events/topics';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import type { ModuleCatalogue } from '../../services/modules/catalogue';
import { InstalledModules } from './installed-modules';
import { createTenantEventListener, type TenantEventListener } from './tenant-event-listener';
import { MODULE_EVENT_PREFIX } from '../../services/modules/module-changes';
import type { ModuleRegistryDeps } from '../../services/modules/module-registry';

/** The module registry of the gateway: the catalogue, the installed-modules cache and the cache's Kafka invalidation. */
export interface ModuleServices extends ModuleRegistryDeps {
  installed: InstalledModules;
  /**
   * Drops a tenant's cached installed modules on module.registry.*, so a change made through another
   * gateway process takes effect here at once rather than after the cache's TTL.
   */
  changes: TenantEventListener;
}

/** The catalogue is loaded first (loadModuleCatalogue), so a broken manifest stops the start before anything is opened. */
export function createModuleServices(config: Readonly<Config>, catalogue: ModuleCatalogue, db: DatabasePool, logger: Logger): ModuleServices {
  const installed = new InstalledModules({ db, ttlMs: config.modules.cacheTtlMs, maxTenants: config.modules.cacheMaxTenants });
  const changes = createTenantEventListener(config, logger, {
    name: 'module-cache', topic: topics.module.name,
    concerns: (type) => type.startsWith(MODULE_EVENT_PREFIX), invalidate: (tenantId) => installed.invalidate(tenantId),
  });
  return { db, catalogue, installed, enforcePlanLimits: config.billingLimits.enabled, changes };
}
