import { permits, type PermissionCheck } from '../../services/access/permissions';
import type { AuthState } from '../../common/context';
import type { PermissionCache } from './permission-cache';

/**
 * Resolves a caller's permissions on every request (docs/reference/access.md#rule-4:
 * never from the token), from the roles the user holds now in the token's tenant, so a role granted, changed or
 * revoked takes effect on the next request without a new token. Matching is the exact key, then
 * `<module>.*`, then `*` (the owner's wildcard, docs/reference/access.md#rule-7); an archived key grants nothing, whichever
 * of these would match it (docs/reference/access.md#rule-5).
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

  /** Whether the caller holds at least one of `permissions`, by the same rules, for one lookup of the grants. */
  async allowsAny(auth: AuthState, permissions: readonly string[]): Promise<boolean> {
    if (auth.apiKey) return permissions.some((permission) => permits(auth.apiKey!.permissions, permission));
    const grants = await this.cache.grantsOf(auth.tenantId, auth.userId);
    return permissions.some((permission) => !grants.archived.has(permission) && permits(grants.permissions, permission));
  }
}
