import type { Config } from '../../common/config';
import { createKafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import type { ModuleCatalogue } from './catalogue';
import { InstalledModules } from './installed-modules';
import { ModuleChangeListener } from './module-change-listener';
import type { ModuleRegistryDeps } from './module-registry';

/** The module registry of the gateway: the catalogue, the installed-modules cache and the cache's Kafka invalidation. */
export interface ModuleServices extends ModuleRegistryDeps {
  changes: ModuleChangeListener;
}

/** The catalogue is loaded first (loadModuleCatalogue), so a broken manifest stops the start before anything is opened. */
export function createModuleServices(config: Readonly<Config>, catalogue: ModuleCatalogue, db: DatabasePool, logger: Logger): ModuleServices {
  const installed = new InstalledModules({ db, ttlMs: config.modules.cacheTtlMs, maxTenants: config.modules.cacheMaxTenants });
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: `${config.kafka.clientId}-module-cache` }, logger);
  return {
    db, catalogue, installed, enforcePlanLimits: config.billingLimits.enabled, changes: new ModuleChangeListener(kafka, installed, logger),
  };
}
