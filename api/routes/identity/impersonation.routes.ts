import { authOf } from '../../context';
import type { IdentityDeps } from '../../../services/identity/deps';
import { impersonate, type ImpersonationRequest } from '../../../services/identity/impersonate';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { tokenPair } from './auth.schemas';
import { impersonationBody } from './impersonation.schemas';

type NoParams = Record<string, never>;

/** docs/reference/identity.md#rule-36: POST /auth/impersonate (namespace iam). */
export function impersonationRoutes(deps: IdentityDeps): AnyRoute[] {
  return [
    defineRoute<NoParams, NoParams, ImpersonationRequest>({
      namespace: 'iam', method: 'POST', path: '/auth/impersonate', operationId: 'iam.auth.impersonate',
      summary: 'The Platform Owner acts as a user of a tenant',
      description: 'Platform Owner only (403 for anyone else, tenant owners and admins included); reason is required. '
        + 'Acts as userId, or by default as the tenant’s owner. The token pair is scoped to the tenant and ends one hour '
        + 'after the start (refreshing keeps the end); the access token names the Platform Owner in its act claim, and '
        + 'the audit record auth.impersonation.started is written in the tenant.',
      auth: 'bearer', permission: 'users.impersonate', stepUp: { apiKeys: 'refused' },
      schemas: { body: impersonationBody, response: { 200: tokenPair } },
      async handler(ctx) {
        ctx.body = await impersonate(deps, authOf(ctx), ctx.guard.body);
      },
    }),
  ];
}
