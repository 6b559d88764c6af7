import { problems } from '../../common/problems';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { selectTenantRoles, type RoleRef } from '../../db/queries/identity/security-flows.queries';

/** Invitations and POST /users name the roles by id (`role_id`) or by name (`roles`); neither means member. */
export interface RoleChoice {
  role_id?: string;
  roles?: string[];
}

/** member is the default for invited users (docs/reference/identity.md#rule-27). */
const DEFAULT_ROLE = 'member';

/**
 * The tenant's roles the request names. An unknown one is 400 validation-error (code UNKNOWN_ROLE),
 * and so is owner (code OWNER_NOT_ASSIGNABLE): a tenant has one owner, handed over only by the
 * ownership transfer.
 */
export async function resolveRoleChoice(tx: DatabaseTransactionConnection, choice: RoleChoice): Promise<RoleRef[]> {
  const field = choice.role_id ? 'role_id' : 'roles';
  const ids = choice.role_id ? [choice.role_id] : [];
  const names = choice.role_id ? [] : [...new Set(choice.roles ?? [DEFAULT_ROLE])];
  const found = [...await selectTenantRoles(tx, { ids, names })];
  const missing = [
    ...ids.filter((id) => !found.some((role) => role.id === id)),
    ...names.filter((name) => !found.some((role) => role.name === name)),
  ];
  if (missing.length > 0) {
    throw problems.validation([{ field, code: 'UNKNOWN_ROLE', message: `No role ${missing.join(', ')} in this tenant` }]);
  }
  if (found.some((role) => role.name === 'owner')) {
    throw problems.validation([{ field, code: 'OWNER_NOT_ASSIGNABLE', message: 'A tenant has one owner; the owner role cannot be given here' }]);
  }
  return found;
}

/** The role of auth.user.created is one of member, admin or owner (its schema in services/events/kernel-schemas.ts). */
export function eventRole(roleNames: readonly string[]): 'admin' | 'member' {
  return roleNames.includes('admin') ? 'admin' : 'member';
}
