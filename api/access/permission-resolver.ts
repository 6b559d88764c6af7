import { permits } from '../../common/identity/permissions';
import { selectPermissionsOfRoles } from '../../db/queries/identity/roles.queries';
import type { DatabasePool } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import type { AuthState } from '../context';

/**
 * Resolves a caller's permissions on every request from the role names in the token (document 1,
 * Authentication 7: never from the token itself), so a changed role takes effect on the next
 * request. The Owner skips the lookup (rule 8).
 */
export class PermissionResolver {
  constructor(private readonly db: DatabasePool) {}

  async allows(auth: AuthState, permission: string): Promise<boolean> {
    if (auth.roles.includes('owner')) return true;
    if (auth.roles.length === 0) return false;
    const held = await withTenant(this.db, auth.tenantId, (tx) => selectPermissionsOfRoles(tx, auth.roles));
    return permits(held, permission);
  }
}
