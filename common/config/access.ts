import Joi from 'joi';
import { setting } from './setting';

/**
 * docs/reference/access.md#rule-19 (roles per user, permissions per role, roles per tenant), and the gateway's
 * permission cache: how long a tenant's resolved permissions may be reused (a per-request version
 * check makes changes visible at once; the TTL bounds what a missed bump could cost) and how many
 * users' permissions it holds at most.
 */
export const accessSettings = {
  rbac: {
    maxRolesPerUser: setting('RBAC_MAX_ROLES_PER_USER', Joi.number().integer().min(1).default(50)),
    maxPermissionsPerRole: setting('RBAC_MAX_PERMISSIONS_PER_ROLE', Joi.number().integer().min(1).default(1000)),
    maxRolesPerTenant: setting('RBAC_MAX_ROLES_PER_TENANT', Joi.number().integer().min(3).default(500)),
    cacheTtlMs: setting('RBAC_CACHE_TTL_MS', Joi.number().integer().min(0).max(3_600_000).default(30_000)),
    cacheMaxEntries: setting('RBAC_CACHE_MAX_ENTRIES', Joi.number().integer().min(1).default(100_000)),
  },
};
