import { authOf } from '../../context';
import type { IdentityDeps } from '../../../services/identity/deps';
import { getUser, getUserPermissions, listUsers, type UserListQuery } from '../../../services/identity/users/read';
import { deleteUser, restoreUser } from '../../../services/identity/users/remove';
import { updateUser, type UserPatch } from '../../../services/identity/users/update';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { user } from './auth.schemas';
import {
  userDetails, userIdParams, userList, userListQuery, userPatchBody, userPermissions, type UserIdParams,
} from './users.schemas';

type NoParams = Record<string, never>;

/**
 * Users (namespace iam; docs/reference/identity.md, Rules: users of a tenant): the users of the caller's tenant. A user of another tenant is
 * 404, exactly as an unknown id. Soft delete is per tenant (see services/identity/users/remove.ts).
 * POST /users (create and invite) lives with the invitation flow.
 */
export function userRoutes(deps: IdentityDeps): AnyRoute[] {
  return [
    defineRoute<NoParams, UserListQuery>({
      namespace: 'iam', method: 'GET', path: '/users', operationId: 'iam.users.list',
      summary: 'The users of the current tenant, a page at a time',
      description: 'Soft-deleted users are left out unless include_deleted=true. Filters: status, and email (part of the address).',
      auth: 'bearer', permission: 'users.list',
      schemas: { query: userListQuery, response: { 200: userList } },
      async handler(ctx) {
        ctx.body = await listUsers(deps, authOf(ctx), ctx.guard.query);
      },
    }),
    defineRoute<UserIdParams>({
      namespace: 'iam', method: 'GET', path: '/users/:id', operationId: 'iam.users.get',
      summary: 'A user with its roles and the union of their permissions',
      auth: 'bearer', permission: 'users.list',
      schemas: { params: userIdParams, response: { 200: userDetails } },
      async handler(ctx) {
        ctx.body = await getUser(deps, authOf(ctx), ctx.guard.params.id);
      },
    }),
    defineRoute<UserIdParams, NoParams, UserPatch>({
      namespace: 'iam', method: 'PATCH', path: '/users/:id', operationId: 'iam.users.update',
      summary: 'Changes a user’s name, e-mail, status or avatar',
      description: 'status locked blocks the user in this tenant and ends its sessions here; active unblocks. A new e-mail '
        + 'is unverified and must be free (409 conflict). avatarFileId sets the avatar from an image of this tenant\'s avatars '
        + 'bucket, with the rules and limits of PUT /auth/me/avatar (400 FILE_NOT_FOUND, FILE_NOT_AVATAR); null clears it. Name, '
        + 'e-mail and avatar of an account that also belongs to other tenants, and anything of the owner, are changed by their '
        + 'holder only (403). A deleted user is restored first (409).',
      auth: 'bearer', permission: 'users.update',
      schemas: { params: userIdParams, body: userPatchBody, response: { 200: user } },
      async handler(ctx) {
        ctx.body = await updateUser(deps, authOf(ctx), ctx.guard.params.id, ctx.guard.body);
      },
    }),
    defineRoute<UserIdParams>({
      namespace: 'iam', method: 'DELETE', path: '/users/:id', operationId: 'iam.users.delete',
      summary: 'Soft-deletes a user in this tenant',
      description: 'The user can no longer sign in to this tenant and its sessions here end; its data is kept and '
        + 'PATCH /users/:id/restore brings it back. The owner and the caller itself cannot be deleted (403).',
      auth: 'bearer', permission: 'users.delete',
      schemas: { params: userIdParams, response: { 204: null } },
      async handler(ctx) {
        await deleteUser(deps, authOf(ctx), ctx.guard.params.id);
        ctx.status = 204;
      },
    }),
    defineRoute<UserIdParams>({
      namespace: 'iam', method: 'PATCH', path: '/users/:id/restore', operationId: 'iam.users.restore',
      summary: 'Restores a soft-deleted user',
      auth: 'bearer', permission: 'users.update',
      schemas: { params: userIdParams, response: { 200: user } },
      async handler(ctx) {
        ctx.body = await restoreUser(deps, authOf(ctx), ctx.guard.params.id);
      },
    }),
    defineRoute<UserIdParams>({
      namespace: 'iam', method: 'GET', path: '/users/:id/permissions', operationId: 'iam.users.permissions',
      summary: 'The effective permissions of a user: the union over its roles',
      auth: 'bearer', permission: 'users.list',
      schemas: { params: userIdParams, response: { 200: userPermissions } },
      async handler(ctx) {
        ctx.body = await getUserPermissions(deps, authOf(ctx), ctx.guard.params.id);
      },
    }),
  ];
}
