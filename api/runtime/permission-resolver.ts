import { permits, type PermissionCheck } from '../../services/access/permissions';
import type { AuthState } from '../../common/context';
import type { PermissionCache } from './permission-cache';

/**
 * Resolves a caller's permissions on every request (document 1, Authentication 7: never from the
 * token), from the roles the user holds now in the token's tenant, so a role granted, changed or
 * revoked takes effect on the next request without a new token. Matching is the exact key, then
 * `<module>.*`, then `*` (the owner's wildcard, rule 8); an archived key grants nothing, whichever
 * of these would match it (document 1, Module permissions).
 */
export class PermissionResolver implements PermissionCheck {
  constructor(private readonly cache: PermissionCache) {}

  async allows(auth: AuthState, permission: string): Promise<boolean> {
    // An API key holds exactly its own keys, whatever roles exist (docs/decisions/identity.md, API keys);
    // a module key it holds grants nothing while the module is uninstalled, since the module's routes answer 404 first.
    if (auth.apiKey) return permits(auth.apiKey.permissions, permission);
    const grants = await this.cache.grantsOf(auth.tenantId, auth.userId);
    return !grants.archived.has(permission) && permits(grants.permissions, permission);
  }
}
