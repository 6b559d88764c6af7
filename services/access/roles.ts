import { accountIdOf, type Caller } from '../../common/context';
import Joi from 'joi';
import type { Config } from '../../common/config';
import { newId } from '../../common/ids';
import { problems } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { selectTenantPermissions, type RegisteredPermission } from '../../db/queries/access/permissions.queries';
import {
  countRoleHolders, countTenantRoles, countUserRoles, deleteRole as deleteRoleRow, deleteUserRole, insertCustomRole, insertUserRole,
  isAssignableUser, lockTenantRbac, selectRole, selectRolePage, updateRole as updateRoleRow, type RolePageCursor, type RoleRow,
} from '../../db/queries/access/roles.queries';
import { effectivePermissions, type RoleGrants } from '../../db/queries/identity/roles.queries';
import { retryTransient } from '../../db/retry';
import { withTenant } from '../../db/tenant';
import type { LocalRbacVersions } from './permissions';
import { decodePageToken, encodePageToken } from '../../common/pagination';
import { checkPermissionCount, checkRolePermissions, OWNER_WILDCARD, stalePermissionsOf } from './permission-rules';
import { recordRoleChange } from './role-changes';

export type { RoleRow };

/**
 * Roles and permissions of one tenant (docs/reference/access.md), shared by route sets A
 * and B, which differ only in paths and field names. Every change runs in one transaction of the
 * caller's tenant that first takes the tenant's RBAC lock (lockTenantRbac: also the version bump the
 * gateway's permission cache checks), then checks limits and owner rules, changes the rows and
 * writes auth.role.changed and the audit record. Roles of another tenant, and platform-scoped
 * roles, are 404 like roles that do not exist.
 */

export interface RolesDeps {
  db: DatabasePool;
  config: Readonly<Pick<Config, 'rbac'>>;
  /** This gateway's RBAC versions: a change made here applies to its next request without waiting for the announcement. */
  versions?: LocalRbacVersions;
}

export const OWNER_ROLE = 'owner';

const isOwnerRole = (role: RoleRow) => role.builtIn && role.name === OWNER_ROLE;

export interface RoleDetails {
  role: RoleRow;
  /** Keys the role holds that grant nothing while their module is uninstalled. */
  stalePermissions: string[];
}

export interface RolePage {
  roles: readonly RoleRow[];
  nextPageToken?: string;
}

const cursorShape = Joi.object<RolePageCursor>({ name: Joi.string().max(100), id: Joi.string().uuid() });

export async function listRoles(deps: RolesDeps, caller: Caller, page: { size: number; token?: string }): Promise<RolePage> {
  const after = decodePageToken(page.token, cursorShape);
  const rows = await withTenant(deps.db, caller.tenantId, (tx) => selectRolePage(tx, caller.tenantId, after, page.size + 1));
  const roles = rows.slice(0, page.size);
  const last = roles.at(-1);
  return rows.length > page.size && last ? { roles, nextPageToken: encodePageToken({ name: last.name, id: last.id }) } : { roles };
}

async function roleOrNotFound(tx: DatabaseTransactionConnection, tenantId: string, roleId: string): Promise<RoleRow> {
  const role = await selectRole(tx, tenantId, roleId);
  if (!role) throw problems.notFound('role');
  return role;
}

export function getRole(deps: RolesDeps, caller: Caller, roleId: string): Promise<RoleDetails> {
  return withTenant(deps.db, caller.tenantId, async (tx) => {
    const role = await roleOrNotFound(tx, caller.tenantId, roleId);
    const registry = await selectTenantPermissions(tx, caller.tenantId);
    return { role, stalePermissions: stalePermissionsOf(role.permissions, registry) };
  });
}

export interface PermissionGroup {
  module: string;
  permissions: { key: string; description: string }[];
}

/** The role builder's catalogue: active keys grouped by module (system first); archived keys are hidden. */
export async function listPermissions(deps: RolesDeps, caller: Caller): Promise<PermissionGroup[]> {
  const registry = await withTenant(deps.db, caller.tenantId, (tx) => selectTenantPermissions(tx, caller.tenantId));
  const groups = new Map<string, PermissionGroup>();
  for (const { key, module, description, archived } of registry) {
    if (archived) continue;
    const group = groups.get(module) ?? { module, permissions: [] };
    group.permissions.push({ key, description });
    groups.set(module, group);
  }
  return [...groups.values()];
}

export interface RoleInput {
  name: string;
  description: string;
  permissions: string[];
}

/**
 * One RBAC change: a transaction of the caller's tenant that first takes the tenant's RBAC lock (and
 * bumps its version). A deadlock with a writer that touched the tenant's roles before the lock (the
 * version triggers run after the change they report) is retried as db/retry.ts does for every transaction.
 */
function rbacChange<T>(deps: RolesDeps, caller: Caller, work: (tx: DatabaseTransactionConnection) => Promise<T>): Promise<T> {
  return retryTransient(() => withTenant(deps.db, caller.tenantId, async (tx) => {
    await lockTenantRbac(tx);
    return work(tx);
  })).finally(() => deps.versions?.forget(caller.tenantId));
}

/** Checks a tenant role's keys: the limit first (rbac-limit-exceeded), then each key against the registry. */
function checkPermissionsOf(
  deps: RolesDeps, requested: readonly string[], registry: readonly RegisteredPermission[], heldBefore: readonly string[], field: string,
): void {
  checkPermissionCount(requested.length, deps.config.rbac.maxPermissionsPerRole);
  checkRolePermissions(requested, { registry, heldBefore, field });
}

/** `field` names the permissions in errors[] as the route set calls them (permission_ids or permissions). */
export function createRole(deps: RolesDeps, caller: Caller, input: RoleInput, field: string): Promise<RoleRow> {
  return rbacChange(deps, caller, async (tx) => {
    const max = deps.config.rbac.maxRolesPerTenant;
    if (await countTenantRoles(tx, caller.tenantId) >= max) {
      throw problems.rbacLimitExceeded(`A tenant has at most ${max} roles (RBAC_MAX_ROLES_PER_TENANT)`);
    }
    checkPermissionsOf(deps, input.permissions, await selectTenantPermissions(tx, caller.tenantId), [], field);
    const role = await insertCustomRole(tx, { id: newId(), tenantId: caller.tenantId, createdBy: accountIdOf(caller.userId), ...input });
    await recordRoleChange(tx, { tenantId: caller.tenantId, actor: caller, kind: 'created', before: null, after: role });
    return role;
  });
}

/**
 * A partial change (route set A sends any of the fields, set B all of them). Built-in roles keep
 * their names; the owner role keeps exactly `*` (docs/reference/access.md#rule-7: never stripped of the wildcard).
 */
export function updateRole(deps: RolesDeps, caller: Caller, roleId: string, changes: Partial<RoleInput>, field: string): Promise<RoleDetails> {
  return rbacChange(deps, caller, async (tx) => {
    const before = await roleOrNotFound(tx, caller.tenantId, roleId);
    if (before.builtIn && changes.name !== undefined && changes.name !== before.name) {
      throw problems.forbidden(`The built-in role ${before.name} cannot be renamed`);
    }
    const registry = await selectTenantPermissions(tx, caller.tenantId);
    if (changes.permissions !== undefined) {
      if (isOwnerRole(before)) {
        if (changes.permissions.join() !== OWNER_WILDCARD) throw problems.forbidden('The owner role always holds exactly *');
      } else {
        checkPermissionsOf(deps, changes.permissions, registry, before.permissions, field);
      }
    }
    const role = await updateRoleRow(tx, caller.tenantId, roleId, {
      name: changes.name ?? before.name,
      description: changes.description ?? before.description,
      permissions: changes.permissions ?? before.permissions,
    });
    await recordRoleChange(tx, { tenantId: caller.tenantId, actor: caller, kind: 'updated', before, after: role });
    return { role, stalePermissions: stalePermissionsOf(role.permissions, registry) };
  });
}

/** Custom roles only: deleting a built-in role is 403 (docs/reference/access.md#rule-6). Its assignments go with it. */
export function deleteRole(deps: RolesDeps, caller: Caller, roleId: string): Promise<void> {
  return rbacChange(deps, caller, async (tx) => {
    const role = await roleOrNotFound(tx, caller.tenantId, roleId);
    if (role.builtIn) throw problems.forbidden(`The built-in role ${role.name} cannot be deleted`);
    await deleteRoleRow(tx, caller.tenantId, roleId);
    await recordRoleChange(tx, { tenantId: caller.tenantId, actor: caller, kind: 'deleted', before: role, after: null });
  });
}

async function assignableUserOrNotFound(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<void> {
  if (!await isAssignableUser(tx, tenantId, userId)) throw problems.notFound('user');
}

/** The user's roles after an assignment or revocation. */
export interface UserRoles {
  userId: string;
  roles: string[];
}

/**
 * Gives a user a role; assigning a role the user holds changes nothing (no event). The owner role is
 * not handed out here: a tenant has one owner (docs/reference/access.md#rule-7), and ownership moves by the transfer
 * process. Over RBAC_MAX_ROLES_PER_USER the assignment is undone (the transaction rolls back).
 */
export function assignRole(deps: RolesDeps, caller: Caller, roleId: string, userId: string): Promise<UserRoles> {
  return rbacChange(deps, caller, async (tx) => {
    const role = await roleOrNotFound(tx, caller.tenantId, roleId);
    await assignableUserOrNotFound(tx, caller.tenantId, userId);
    if (isOwnerRole(role)) throw problems.forbidden('A tenant has one owner; ownership moves by transfer, not by assignment');
    if (await insertUserRole(tx, caller.tenantId, userId, roleId)) {
      const max = deps.config.rbac.maxRolesPerUser;
      if (await countUserRoles(tx, caller.tenantId, userId) > max) {
        throw problems.rbacLimitExceeded(`A user holds at most ${max} roles (RBAC_MAX_ROLES_PER_USER)`);
      }
      await recordRoleChange(tx, { tenantId: caller.tenantId, actor: caller, kind: 'assigned', before: null, after: role, userId });
    }
    return { userId, roles: (await effectivePermissions(tx, userId)).roles };
  });
}

/** Takes a role from a user; a role the user does not hold is 404. The last owner keeps the owner role (403). */
export function revokeRole(deps: RolesDeps, caller: Caller, roleId: string, userId: string): Promise<UserRoles> {
  return rbacChange(deps, caller, async (tx) => {
    const role = await roleOrNotFound(tx, caller.tenantId, roleId);
    await assignableUserOrNotFound(tx, caller.tenantId, userId);
    if (!await deleteUserRole(tx, caller.tenantId, userId, roleId)) throw problems.notFound('role assignment');
    // Counted under the tenant's RBAC lock, so two revocations cannot both see another owner left.
    if (isOwnerRole(role) && await countRoleHolders(tx, caller.tenantId, roleId) === 0) {
      throw problems.forbidden('The owner role cannot be revoked from the last owner');
    }
    await recordRoleChange(tx, { tenantId: caller.tenantId, actor: caller, kind: 'revoked', before: role, after: null, userId });
    return { userId, roles: (await effectivePermissions(tx, userId)).roles };
  });
}

/** GET /rbac/users/:id/permissions: the union over the user's roles now, archived keys left out. */
export function userPermissions(deps: RolesDeps, caller: Caller, userId: string): Promise<RoleGrants> {
  return withTenant(deps.db, caller.tenantId, async (tx) => {
    await assignableUserOrNotFound(tx, caller.tenantId, userId);
    return effectivePermissions(tx, userId);
  });
}
