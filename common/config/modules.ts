import { join } from 'node:path';
import Joi from 'joi';
import { repoRoot } from '../paths';
import { setting } from './setting';

/**
 * The module registry: the folder of the manifests (`<dir>/<slug>/manifest.json`), and the gateway's
 * cache of each tenant's active modules (how long a tenant's set is reused without a
 * module.registry event, and how many tenants it holds).
 */
export const modulesSettings = {
  modules: {
    dir: setting('MODULES_DIR', Joi.string().default(join(repoRoot, 'modules'))),
    cacheTtlMs: setting('MODULE_CACHE_TTL_MS', Joi.number().integer().min(0).max(600_000).default(5_000)),
    cacheMaxTenants: setting('MODULE_CACHE_MAX_TENANTS', Joi.number().integer().min(1).default(100_000)),
  },
};
