import { problems, type FieldError } from '../../common/problems';
import type { RegisteredPermission } from '../../db/queries/access/permissions.queries';

/** The wildcard only the built-in owner role holds (docs/reference/access.md#rule-6). */
export const OWNER_WILDCARD = '*';
const RESERVED_PREFIXES = ['system.', 'platform.'];

/** The first segment of a key: the module a `<module>.*` wildcard names. */
export function moduleOf(key: string): string {
  return key.slice(0, key.indexOf('.'));
}

export interface PermissionCheck {
  /** The tenant's registry (selectTenantPermissions): system keys and its modules' keys, archived flagged. */
  registry: readonly RegisteredPermission[];
  /** The role's keys before the change: an archived key it already holds may stay (the role builder sends it back). */
  heldBefore: readonly string[];
  /** The request field, for errors[]: `permission_ids` (route set A) or `permissions` (set B). */
  field: string;
}

/**
 * Checks the keys a tenant role is given (docs/reference/access.md#rule-10). Refused with 400
 * validation-error, every offending key named: `*` (owner only), reserved `system.`/`platform.`
 * keys, unknown keys, archived keys the role did not hold already, and wildcards other than
 * `<module>.*` of a module the tenant has active keys of.
 */
export function checkRolePermissions(requested: readonly string[], check: PermissionCheck): void {
  const active = new Set(check.registry.filter((p) => !p.archived).map((p) => p.key));
  const archived = new Set(check.registry.filter((p) => p.archived).map((p) => p.key));
  const activeModules = new Set([...active].map(moduleOf));
  const heldBefore = new Set(check.heldBefore);

  const errors: FieldError[] = [];
  requested.forEach((key, index) => {
    const refuse = (message: string) => errors.push({ field: `${check.field}[${index}]`, message, code: 'INVALID_VALUE' });
    if (key === OWNER_WILDCARD) return refuse('* is held by the owner role only');
    if (RESERVED_PREFIXES.some((prefix) => key.startsWith(prefix))) return refuse(`${key} is platform-only and cannot be given to a tenant role`);
    if (key.endsWith('.*')) {
      const module = key.slice(0, -2);
      if (module.includes('.') || !(activeModules.has(module) || heldBefore.has(key))) refuse(`${key} is not the wildcard of a known module`);
      return undefined;
    }
    if (active.has(key) || (archived.has(key) && heldBefore.has(key))) return undefined;
    return refuse(archived.has(key) ? `${key} is archived (its module is uninstalled)` : `${key} is not a registered permission`);
  });
  if (errors.length > 0) throw problems.validation(errors, 'Some permissions cannot be given to this role');
}

/**
 * The keys a role holds that grant nothing now because their module was uninstalled: archived keys,
 * and wildcards of a module whose keys are all archived. Shown as the stale-permissions warning.
 */
export function stalePermissionsOf(held: readonly string[], registry: readonly RegisteredPermission[]): string[] {
  const archived = new Set(registry.filter((p) => p.archived).map((p) => p.key));
  const activeModules = new Set(registry.filter((p) => !p.archived).map((p) => moduleOf(p.key)));
  const archivedModules = new Set([...archived].map(moduleOf).filter((module) => !activeModules.has(module)));
  return held.filter((key) => archived.has(key) || (key.endsWith('.*') && archivedModules.has(key.slice(0, -2))));
}

export function checkPermissionCount(count: number, max: number): void {
  if (count > max) throw problems.rbacLimitExceeded(`A role holds at most ${max} permissions (RBAC_MAX_PERMISSIONS_PER_ROLE); ${count} were given`);
}
