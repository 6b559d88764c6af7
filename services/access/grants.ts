import type { DatabasePool } from '../../db/pool';
import { selectArchivedPermissions } from '../../db/queries/access/permissions.queries';
import { selectRbacVersions } from '../../db/queries/access/roles.queries';
import { effectivePermissions, type RoleGrants } from '../../db/queries/identity/roles.queries';
import { withTenant } from '../../db/tenant';

/**
 * What the gateway's permission cache (api/runtime/permission-cache.ts) and its version reader
 * (api/runtime/tenant-versions.ts) read of a tenant's RBAC: the version the database bumps with every
 * change of roles, assignments or registry (migration 0010), and a user's grants at that version.
 */

/** Each tenant's RBAC version asked for (0 for a tenant whose roles never changed), in one query. */
export { selectRbacVersions as rbacVersionsOf };

/** The channel migration 0020's rbac_bump_version announces every bump on, as `<tenant id>:<version>`. */
export const RBAC_VERSIONS_CHANNEL = 'rbac_versions';

export interface VersionedGrants {
  /** The tenant's RBAC version the grants are at least as new as. */
  version: number;
  /** The roles the user holds now and the union of their keys (wildcards included). */
  grants: RoleGrants;
  /** The tenant's archived keys: they grant nothing, not even through a wildcard. */
  archived: readonly string[];
}

/**
 * A user's grants in a tenant, in one transaction of the tenant. The version is read first: the
 * grants read after it are at least that new, so an entry kept at this version is never newer than
 * it claims.
 */
export function versionedGrants(db: DatabasePool, tenantId: string, userId: string): Promise<VersionedGrants> {
  return withTenant(db, tenantId, async (tx) => ({
    version: (await selectRbacVersions(tx, [tenantId])).get(tenantId) ?? 0,
    grants: await effectivePermissions(tx, userId),
    archived: await selectArchivedPermissions(tx, tenantId),
  }));
}
