/**
 * The global feature flags as the gateway's flag cache (api/runtime/flag-cache.ts) loads them: the
 * flags without a tenant, which row-level security lets the application role read with no tenant set.
 */
export { listGlobalFlags, type FlagRow } from '../../db/queries/gateway/feature-flags.queries';

/** The channel migration 0035 announces every change of feature_flags on (an empty payload). */
export const FEATURE_FLAGS_CHANNEL = 'feature_flags';
