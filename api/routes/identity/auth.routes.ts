import { authOf } from '../../context';
import type { IdentityDeps } from '../../../services/identity/deps';
import { login, selectTenant, type Credentials } from '../../../services/identity/login';
import { logout, refresh } from '../../../services/identity/refresh';
import { register, type Registration } from '../../../services/identity/register';
import { listTenants, me, switchTenant } from '../../../services/identity/tenants';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import {
  loginBody, loginResponse, meResponse, refreshTokenBody, registerBody, registerResponse, selectTenantBody,
  switchTenantBody, tenantList, tokenPair, type RefreshTokenBody, type SelectTenantBody, type SwitchTenantBody,
} from './auth.schemas';

type NoParams = Record<string, never>;

/** Authentication and sessions (namespace iam; docs/reference/identity.md#resources). The flows live in services/identity/. */
export function authRoutes(deps: IdentityDeps): AnyRoute[] {
  return [
    defineRoute<NoParams, NoParams, Registration>({
      namespace: 'iam', method: 'POST', path: '/auth/register', operationId: 'iam.auth.register',
      summary: 'Creates an account, its tenant and a session',
      description: 'Creates the tenant with its built-in roles (owner, admin, member), makes the account its owner, '
        + 'starts the trialing starter subscription and answers with a token pair. A taken e-mail is 409 conflict.',
      auth: 'public',
      schemas: { body: registerBody, response: { 201: registerResponse } },
      async handler(ctx) {
        ctx.body = await register(deps, ctx.guard.body);
        ctx.status = 201;
      },
    }),
    defineRoute<NoParams, NoParams, Credentials>({
      namespace: 'iam', method: 'POST', path: '/auth/login', operationId: 'iam.auth.login',
      summary: 'Signs in with e-mail and password',
      description: 'Answers a token pair, or the tenant-selection result (5-minute session token) when the account '
        + 'belongs to several tenants and none is remembered. Repeated failures are slowed per account and per IP (429).',
      auth: 'public',
      schemas: { body: loginBody, response: { 200: loginResponse } },
      async handler(ctx) {
        ctx.body = await login(deps, ctx.guard.body, ctx.ip);
      },
    }),
    defineRoute<NoParams, NoParams, SelectTenantBody>({
      namespace: 'iam', method: 'POST', path: '/auth/select-tenant', operationId: 'iam.auth.selectTenant',
      summary: 'Completes a login by choosing the tenant',
      auth: 'public',
      schemas: { body: selectTenantBody, response: { 200: tokenPair } },
      async handler(ctx) {
        ctx.body = await selectTenant(deps, ctx.guard.body);
      },
    }),
    defineRoute<NoParams, NoParams, RefreshTokenBody>({
      namespace: 'iam', method: 'POST', path: '/auth/refresh', operationId: 'iam.auth.refresh',
      summary: 'Rotates a refresh token into a new token pair',
      description: 'Within 10 seconds of a rotation the same token answers the same pair; later reuse revokes the session.',
      auth: 'public',
      schemas: { body: refreshTokenBody, response: { 200: tokenPair } },
      async handler(ctx) {
        ctx.body = await refresh(deps, ctx.guard.body.refreshToken);
      },
    }),
    defineRoute<NoParams, NoParams, RefreshTokenBody>({
      namespace: 'iam', method: 'POST', path: '/auth/logout', operationId: 'iam.auth.logout',
      summary: 'Ends the session of a refresh token',
      auth: 'bearer', allowedBeforeMfa: true,
      schemas: { body: refreshTokenBody, response: { 204: null } },
      async handler(ctx) {
        await logout(deps, authOf(ctx), ctx.guard.body.refreshToken);
        ctx.status = 204;
      },
    }),
    defineRoute({
      namespace: 'iam', method: 'GET', path: '/auth/me', operationId: 'iam.auth.me',
      summary: 'The current user with roles and permissions',
      auth: 'bearer', allowedBeforeMfa: true,
      schemas: { response: { 200: meResponse } },
      async handler(ctx) {
        ctx.body = await me(deps, authOf(ctx));
      },
    }),
    defineRoute({
      namespace: 'iam', method: 'GET', path: '/auth/tenants', operationId: 'iam.auth.tenants',
      summary: 'The tenants the current user belongs to',
      auth: 'bearer', allowedBeforeMfa: true,
      schemas: { response: { 200: tenantList } },
      async handler(ctx) {
        ctx.body = { data: await listTenants(deps, authOf(ctx)) };
      },
    }),
    defineRoute<NoParams, NoParams, SwitchTenantBody>({
      namespace: 'iam', method: 'POST', path: '/auth/switch-tenant', operationId: 'iam.auth.switchTenant',
      summary: 'A token pair scoped to another tenant of the current user',
      description: 'A tenant the user does not belong to is 404 not-found.',
      auth: 'bearer', allowedBeforeMfa: true,
      schemas: { body: switchTenantBody, response: { 200: tokenPair } },
      async handler(ctx) {
        ctx.body = await switchTenant(deps, authOf(ctx), ctx.guard.body.tenantId);
      },
    }),
  ];
}
