import {
  assignRole, createRole, deleteRole, getRole, listPermissions, listRoles, revokeRole, updateRole, userPermissions,
  type RoleDetails, type RoleRow, type RolesDeps,
} from '../../../services/access/roles';
import type { PageQuery } from '../../../common/pagination';
import { callerOf } from '../caller';
import { defineRoute, feeds, type AnyRoute, type RouteContext, type ResponseLinks } from '../../http/route-registry';
import {
  assignRoleA, assignRoleB, createRoleA, createRoleB, effectivePermissionsResponse, inputOfA, inputOfB, patchRoleA,
  permissionGroups, putRoleB, roleA, roleB, roleDetailsA, roleDetailsB, roleIdParams, rolePageA, rolePageB, rolePageQuery,
  toRoleA, toRoleB, toRoleDetailsA, toRoleDetailsB, userIdParams, userRoleParams, userRolesA, userRolesB,
  type AssignRoleA, type AssignRoleB, type CreateRoleA, type CreateRoleB, type PatchRoleA, type RoleIdParams, type UserRoleParams,
} from './roles.schemas';

type NoParams = Record<string, never>;

const page = (query: PageQuery) => ({ size: query.page_size, token: query.page_token });

/** Both route sets serve the same roles, so a role created by either feeds the operations of both. */
const ROLE_LINKS: ResponseLinks = {
  ...feeds([
    'iam.roles.get', 'iam.roles.update', 'iam.roles.delete',
    'iam.rbac.roles.get', 'iam.rbac.roles.update', 'iam.rbac.roles.delete', 'iam.rbac.roles.assign', 'iam.rbac.roles.revoke',
  ]),
  'iam.users.roles.assign': { requestBody: { role_id: '$response.body#/id' } },
};

/**
 * Roles and permissions (docs/reference/access.md#resources): route set A (`/roles`, `/permissions`, `/users/:id/roles`,
 * snake_case, `permission_ids`) and route set B (`/rbac/...`, camelCase, `permissions`). Both call
 * the same operations in services/access/roles.ts. GET /users/:id/permissions belongs to the users
 * routes; its set B twin is here. Assigning a role and changing one's permissions hand out power, so
 * they need a recent sign-in and are refused to API keys (stepUp; docs/decisions/identity.md, Step-up
 * for high-value actions).
 */
export function roleRoutes(deps: RolesDeps): AnyRoute[] {
  // What both route sets do alike is one handler each; they differ only in how a role is shown.
  const listed = <View>(toView: (role: RoleRow) => View) => async (ctx: RouteContext<NoParams, PageQuery>) => {
    const { roles, nextPageToken } = await listRoles(deps, callerOf(ctx), page(ctx.guard.query));
    ctx.body = { data: roles.map(toView), ...(nextPageToken ? { next_page_token: nextPageToken } : {}) };
  };
  const shown = <View>(toView: (role: RoleDetails) => View) => async (ctx: RouteContext<RoleIdParams>) => {
    ctx.body = toView(await getRole(deps, callerOf(ctx), ctx.guard.params.id));
  };
  const deleted = async (ctx: RouteContext<RoleIdParams>) => {
    await deleteRole(deps, callerOf(ctx), ctx.guard.params.id);
    ctx.status = 204;
  };
  const permissionsListed = async (ctx: RouteContext) => {
    ctx.body = { data: await listPermissions(deps, callerOf(ctx)) };
  };

  const routeSetA: AnyRoute[] = [
    defineRoute<NoParams, PageQuery>({
      namespace: 'iam', method: 'GET', path: '/roles', operationId: 'iam.roles.list',
      summary: 'Lists the tenant\'s roles (paginated)', auth: 'bearer', permission: 'roles.list',
      schemas: { query: rolePageQuery, response: { 200: rolePageA } },
      handler: listed(toRoleA),
    }),
    defineRoute<NoParams, NoParams, CreateRoleA>({
      namespace: 'iam', method: 'POST', path: '/roles', operationId: 'iam.roles.create',
      summary: 'Creates a custom role',
      description: 'A name taken in the tenant is 409 conflict; unknown, platform-only (system.*) or archived keys are 400; '
        + 'more than RBAC_MAX_ROLES_PER_TENANT roles or RBAC_MAX_PERMISSIONS_PER_ROLE keys is 400 rbac-limit-exceeded.',
      auth: 'bearer', permission: 'roles.create',
      schemas: { body: createRoleA, response: { 201: roleA }, links: { 201: ROLE_LINKS } },
      async handler(ctx) {
        const { name, description, permission_ids: permissions } = ctx.guard.body;
        ctx.body = toRoleA(await createRole(deps, callerOf(ctx), { name, description, permissions }, 'permission_ids'));
        ctx.status = 201;
      },
    }),
    defineRoute<RoleIdParams>({
      namespace: 'iam', method: 'GET', path: '/roles/:id', operationId: 'iam.roles.get',
      summary: 'A role, with the keys it holds that are archived (stale_permissions)', auth: 'bearer', permission: 'roles.list',
      schemas: { params: roleIdParams, response: { 200: roleDetailsA } },
      handler: shown(toRoleDetailsA),
    }),
    defineRoute<RoleIdParams, NoParams, PatchRoleA>({
      namespace: 'iam', method: 'PATCH', path: '/roles/:id', operationId: 'iam.roles.update',
      summary: 'Changes a role\'s name, description or permissions',
      description: 'Built-in roles keep their names and the owner role keeps exactly * (403 forbidden).',
      auth: 'bearer', permission: 'roles.update', stepUp: { apiKeys: 'refused' },
      schemas: { params: roleIdParams, body: patchRoleA, response: { 200: roleDetailsA } },
      async handler(ctx) {
        ctx.body = toRoleDetailsA(await updateRole(deps, callerOf(ctx), ctx.guard.params.id, inputOfA(ctx.guard.body), 'permission_ids'));
      },
    }),
    defineRoute<RoleIdParams>({
      namespace: 'iam', method: 'DELETE', path: '/roles/:id', operationId: 'iam.roles.delete',
      summary: 'Deletes a custom role (built-in roles: 403)', auth: 'bearer', permission: 'roles.delete',
      schemas: { params: roleIdParams, response: { 204: null } },
      handler: deleted,
    }),
    defineRoute({
      namespace: 'iam', method: 'GET', path: '/permissions', operationId: 'iam.permissions.list',
      summary: 'Every permission a tenant role can hold, grouped by module', auth: 'bearer', permission: 'roles.list',
      schemas: { response: { 200: permissionGroups } },
      handler: permissionsListed,
    }),
    defineRoute<RoleIdParams, NoParams, AssignRoleA>({
      namespace: 'iam', method: 'POST', path: '/users/:id/roles', operationId: 'iam.users.roles.assign',
      summary: 'Assigns a role to a user',
      description: 'Takes effect on the user\'s next request, without a new token. The owner role is not assignable (403).',
      auth: 'bearer', permission: 'roles.assign', stepUp: { apiKeys: 'refused' },
      schemas: { params: userIdParams, body: assignRoleA, response: { 200: userRolesA } },
      async handler(ctx) {
        const { userId, roles } = await assignRole(deps, callerOf(ctx), ctx.guard.body.role_id, ctx.guard.params.id);
        ctx.body = { user_id: userId, roles };
      },
    }),
    defineRoute<UserRoleParams>({
      namespace: 'iam', method: 'DELETE', path: '/users/:id/roles/:roleId', operationId: 'iam.users.roles.revoke',
      summary: 'Revokes a role from a user (never the owner role from the last owner)', auth: 'bearer', permission: 'roles.assign',
      schemas: { params: userRoleParams, response: { 204: null } },
      async handler(ctx) {
        await revokeRole(deps, callerOf(ctx), ctx.guard.params.roleId, ctx.guard.params.id);
        ctx.status = 204;
      },
    }),
  ];

  const routeSetB: AnyRoute[] = [
    defineRoute<NoParams, PageQuery>({
      namespace: 'iam', method: 'GET', path: '/rbac/roles', operationId: 'iam.rbac.roles.list',
      summary: 'Lists the tenant\'s roles (paginated)', auth: 'bearer', permission: 'roles.list',
      schemas: { query: rolePageQuery, response: { 200: rolePageB } },
      handler: listed(toRoleB),
    }),
    defineRoute<NoParams, NoParams, CreateRoleB>({
      namespace: 'iam', method: 'POST', path: '/rbac/roles', operationId: 'iam.rbac.roles.create',
      summary: 'Creates a custom role', description: 'As POST /roles, with the keys in `permissions`.',
      auth: 'bearer', permission: 'roles.create',
      schemas: { body: createRoleB, response: { 201: roleB }, links: { 201: ROLE_LINKS } },
      async handler(ctx) {
        ctx.body = toRoleB(await createRole(deps, callerOf(ctx), inputOfB(ctx.guard.body), 'permissions'));
        ctx.status = 201;
      },
    }),
    defineRoute<RoleIdParams>({
      namespace: 'iam', method: 'GET', path: '/rbac/roles/:id', operationId: 'iam.rbac.roles.get',
      summary: 'A role, with the keys it holds that are archived (stalePermissions)', auth: 'bearer', permission: 'roles.list',
      schemas: { params: roleIdParams, response: { 200: roleDetailsB } },
      handler: shown(toRoleDetailsB),
    }),
    defineRoute<RoleIdParams, NoParams, CreateRoleB>({
      namespace: 'iam', method: 'PUT', path: '/rbac/roles/:id', operationId: 'iam.rbac.roles.update',
      summary: 'Replaces a role\'s name, description and permissions',
      description: 'Built-in roles keep their names and the owner role keeps exactly * (403 forbidden).',
      auth: 'bearer', permission: 'roles.update', stepUp: { apiKeys: 'refused' },
      schemas: { params: roleIdParams, body: putRoleB, response: { 200: roleDetailsB } },
      async handler(ctx) {
        ctx.body = toRoleDetailsB(await updateRole(deps, callerOf(ctx), ctx.guard.params.id, inputOfB(ctx.guard.body), 'permissions'));
      },
    }),
    defineRoute<RoleIdParams>({
      namespace: 'iam', method: 'DELETE', path: '/rbac/roles/:id', operationId: 'iam.rbac.roles.delete',
      summary: 'Deletes a custom role (built-in roles: 403)', auth: 'bearer', permission: 'roles.delete',
      schemas: { params: roleIdParams, response: { 204: null } },
      handler: deleted,
    }),
    defineRoute({
      namespace: 'iam', method: 'GET', path: '/rbac/permissions', operationId: 'iam.rbac.permissions.list',
      summary: 'Every permission a tenant role can hold, grouped by module', auth: 'bearer', permission: 'roles.list',
      schemas: { response: { 200: permissionGroups } },
      handler: permissionsListed,
    }),
    defineRoute<RoleIdParams, NoParams, AssignRoleB>({
      namespace: 'iam', method: 'POST', path: '/rbac/roles/:id/assign', operationId: 'iam.rbac.roles.assign',
      summary: 'Assigns the role to a user', auth: 'bearer', permission: 'roles.assign', stepUp: { apiKeys: 'refused' },
      schemas: { params: roleIdParams, body: assignRoleB, response: { 200: userRolesB } },
      async handler(ctx) {
        ctx.body = await assignRole(deps, callerOf(ctx), ctx.guard.params.id, ctx.guard.body.user_id);
      },
    }),
    defineRoute<RoleIdParams, NoParams, AssignRoleB>({
      namespace: 'iam', method: 'POST', path: '/rbac/roles/:id/revoke', operationId: 'iam.rbac.roles.revoke',
      summary: 'Revokes the role from a user', auth: 'bearer', permission: 'roles.assign',
      schemas: { params: roleIdParams, body: assignRoleB, response: { 200: userRolesB } },
      async handler(ctx) {
        ctx.body = await revokeRole(deps, callerOf(ctx), ctx.guard.params.id, ctx.guard.body.user_id);
      },
    }),
    defineRoute<RoleIdParams>({
      namespace: 'iam', method: 'GET', path: '/rbac/users/:id/permissions', operationId: 'iam.rbac.users.permissions',
      summary: 'The union of a user\'s roles\' permissions now (archived keys left out)', auth: 'bearer', permission: 'users.list',
      schemas: { params: userIdParams, response: { 200: effectivePermissionsResponse } },
      async handler(ctx) {
        const { roles, permissions } = await userPermissions(deps, callerOf(ctx), ctx.guard.params.id);
        ctx.body = { user_id: ctx.guard.params.id, roles, permissions };
      },
    }),
  ];

  return [...routeSetA, ...routeSetB];
}
