import Joi from 'joi';
import type { RoleDetails, RoleInput, RoleRow } from '../../../services/access/roles';
import { uuid } from '../../http/ids';
import { pageOf, pageQuery } from '../../http/pagination';
import { type PageQuery } from '../../../common/pagination';

/**
 * Schemas of both RBAC route sets (docs/reference/access.md#resources). Set A speaks snake_case and
 * calls the keys `permission_ids`; set B speaks camelCase and calls them `permissions`
 * (docs/reference/access.md#rule-12; docs/decisions/access.md, Permission registry and roles). Both assign
 * and revoke with `user_id`/`role_id` as the reference's Resources show them.
 */

export interface RoleIdParams { id: string }
export interface UserRoleParams { id: string; roleId: string }

export const roleIdParams = Joi.object<RoleIdParams>({ id: uuid.required() });
export const userIdParams = Joi.object<RoleIdParams>({ id: uuid.required() });
export const userRoleParams = Joi.object<UserRoleParams>({ id: uuid.required(), roleId: uuid.required() });
export const rolePageQuery = Joi.object<PageQuery>(pageQuery);

/**
 * `platform_owner` is the Platform Owner's platform-scoped role: a tenant role of that name would
 * be mistaken for it wherever role names are read from a token (the rate limit, for one).
 */
// No control characters (Unicode Cc: U+0000-001F, U+007F-009F), written out: the documents' patterns
// carry no flags (api/openapi/json-schema.ts), and \p{Cc} needs the u flag.
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const name = Joi.string().trim().min(1).max(100).pattern(/^[^\x00-\x1F\x7F-\x9F]+$/, 'printable').invalid('platform_owner');
const description = Joi.string().trim().max(500).allow('');
/** An exact key (`crm.contacts.read`), a module wildcard (`crm.*`) or `*`; which are allowed is the registry's call. */
const permissionKey = Joi.string().max(200)
  .pattern(/^(\*|[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)*\.([a-z][a-z0-9_-]*|\*))$/, 'permission key');
// Far above any RBAC_MAX_PERMISSIONS_PER_ROLE; the limit itself is checked as rbac-limit-exceeded.
export const permissionKeys = Joi.array().items(permissionKey).unique().max(100_000);

export interface CreateRoleA { name: string; description: string; permission_ids: string[] }
export interface PatchRoleA { name?: string; description?: string; permission_ids?: string[] }
export interface AssignRoleA { role_id: string }
export interface CreateRoleB { name: string; description: string; permissions: string[] }
export interface AssignRoleB { user_id: string }

export const createRoleA = Joi.object<CreateRoleA>({
  name: name.required(), description: description.default(''), permission_ids: permissionKeys.required(),
});
export const patchRoleA = Joi.object<PatchRoleA>({ name, description, permission_ids: permissionKeys }).min(1);
export const assignRoleA = Joi.object<AssignRoleA>({ role_id: uuid.required() });

export const createRoleB = Joi.object<CreateRoleB>({
  name: name.required(), description: description.default(''), permissions: permissionKeys.required(),
});
/** PUT replaces the role: every field is sent (an absent description becomes empty). */
export const putRoleB = createRoleB;
export const assignRoleB = Joi.object<AssignRoleB>({ user_id: uuid.required() });

export const inputOfA = (body: PatchRoleA): Partial<RoleInput> => ({
  name: body.name, description: body.description, permissions: body.permission_ids,
});
export const inputOfB = (body: CreateRoleB): RoleInput => ({
  name: body.name, description: body.description, permissions: body.permissions,
});

const timestamp = Joi.string().isoDate();
const keyList = Joi.array().items(Joi.string());

const roleFieldsA = {
  id: uuid.required(),
  name: Joi.string().required(),
  description: Joi.string().allow('').required(),
  permission_ids: keyList.required(),
  scope: Joi.string().valid('tenant').required(),
  tenant_id: uuid.required(),
  built_in: Joi.boolean().required(),
  created_by: uuid.allow(null).required(),
  created_at: timestamp.required(),
  updated_at: timestamp.required(),
};
const roleFieldsB = {
  id: uuid.required(),
  name: Joi.string().required(),
  description: Joi.string().allow('').required(),
  permissions: keyList.required(),
  scope: Joi.string().valid('tenant').required(),
  tenantId: uuid.required(),
  builtIn: Joi.boolean().required(),
  createdBy: uuid.allow(null).required(),
  createdAt: timestamp.required(),
  updatedAt: timestamp.required(),
};

export const roleA = Joi.object(roleFieldsA);
export const roleB = Joi.object(roleFieldsB);
/** Details add the stale-permissions warning: held keys of uninstalled modules, which grant nothing. */
export const roleDetailsA = Joi.object({ ...roleFieldsA, stale_permissions: keyList.required() });
export const roleDetailsB = Joi.object({ ...roleFieldsB, stalePermissions: keyList.required() });
export const rolePageA = pageOf(roleA);
export const rolePageB = pageOf(roleB);

export function toRoleA(role: RoleRow) {
  return {
    id: role.id, name: role.name, description: role.description, permission_ids: role.permissions, scope: role.scope,
    tenant_id: role.tenantId, built_in: role.builtIn, created_by: role.createdBy, created_at: role.createdAt, updated_at: role.updatedAt,
  };
}

export function toRoleB(role: RoleRow) {
  return {
    id: role.id, name: role.name, description: role.description, permissions: role.permissions, scope: role.scope,
    tenantId: role.tenantId, builtIn: role.builtIn, createdBy: role.createdBy, createdAt: role.createdAt, updatedAt: role.updatedAt,
  };
}

export const toRoleDetailsA = ({ role, stalePermissions }: RoleDetails) => ({ ...toRoleA(role), stale_permissions: stalePermissions });
export const toRoleDetailsB = ({ role, stalePermissions }: RoleDetails) => ({ ...toRoleB(role), stalePermissions });

export const permissionGroups = Joi.object({
  data: Joi.array().items(Joi.object({
    module: Joi.string().required(),
    permissions: Joi.array().items(Joi.object({ key: Joi.string().required(), description: Joi.string().allow('').required() })).required(),
  })).required(),
});

export const userRolesA = Joi.object({ user_id: uuid.required(), roles: keyList.required() });
export const userRolesB = Joi.object({ userId: uuid.required(), roles: keyList.required() });

/** docs/reference/access.md#rule-17: `{user_id, roles, permissions}`, the same answer as GET /users/:id/permissions. */
export const effectivePermissionsResponse = Joi.object({
  user_id: uuid.required(), roles: keyList.required(), permissions: keyList.required(),
});
