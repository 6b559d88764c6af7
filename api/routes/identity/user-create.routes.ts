import { authOf } from '../../context';
import { createUser, type NewTenantUser } from '../../../services/identity/create-user';
import type { IdentityDeps } from '../../../services/identity/deps';
import { defineRoute, feeds, type AnyRoute } from '../../http/route-registry';
import { createUserBody, createdUserResponse } from './security.schemas';

type NoParams = Record<string, never>;

/** docs/reference/identity.md#rule-29: POST /users (the other user routes live beside it in their own file). */
export function userCreateRoutes(deps: IdentityDeps): AnyRoute[] {
  return [
    defineRoute<NoParams, NoParams, NewTenantUser>({
      namespace: 'iam', method: 'POST', path: '/users', operationId: 'iam.users.create',
      summary: 'Creates a user in the current tenant and e-mails a link to set a password',
      description: 'Roles by role_id or by name (roles); neither means member. The link lives 72 hours and is redeemed by '
        + 'POST /auth/reset-password. An address that already has an account is 409 conflict; invite it instead.',
      auth: 'bearer',
      permission: 'users.create',
      billing: { creates: 'users' },
      schemas: {
        body: createUserBody, response: { 201: createdUserResponse },
        links: {
          201: {
            ...feeds([
              'iam.users.get', 'iam.users.update', 'iam.users.delete', 'iam.users.restore', 'iam.users.permissions',
              'iam.users.providers', 'iam.users.roles.assign', 'iam.rbac.users.permissions',
            ]),
            ...Object.fromEntries(['iam.rbac.roles.assign', 'iam.rbac.roles.revoke'].map((operationId) => [operationId, {
              requestBody: { user_id: '$response.body#/id' },
            }])),
          },
        },
      },
      async handler(ctx) {
        ctx.body = await createUser(deps, authOf(ctx), ctx.guard.body);
        ctx.status = 201;
      },
    }),
  ];
}
