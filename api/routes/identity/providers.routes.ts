import { authOf } from '../../context';
import type { PermissionResolver } from '../../runtime/permission-resolver';
import type { IdentityDeps } from '../../../services/identity/deps';
import { completeCallback } from '../../../services/identity/providers/callback';
import { ExternalProviders, type CallbackQuery } from '../../../services/identity/providers/external-providers';
import { listLinks, startLink, unlink, type LinkServices } from '../../../services/identity/providers/links';
import { defineRoute, feeds, type AnyRoute } from '../../http/route-registry';
import {
  callbackQuery, callbackResponse, providerLinkList, providerList, providerParams, redirectResponse, userParams,
  userProviderParams, type ProviderParams, type UserParams, type UserProviderParams,
} from './providers.schemas';

/**
 * Auth providers, and sign-in by provider (namespace iam; docs/reference/identity.md#rule-8 and #rule-35): OpenID Connect
 * authorization code with PKCE, configured by AUTH_PROVIDERS. The flows live in services/identity/providers/.
 */
export function providerRoutes(deps: IdentityDeps, permissions: PermissionResolver): AnyRoute[] {
  const services: LinkServices = {
    deps,
    providers: new ExternalProviders(deps.config.identity.providers, deps.redis),
    permissions,
  };
  return [
    defineRoute({
      namespace: 'iam', method: 'GET', path: '/auth/providers', operationId: 'iam.auth.providers',
      summary: 'The sign-in providers for the login page',
      auth: 'public',
      schemas: { response: { 200: providerList }, links: { 200: feeds(['iam.auth.providerLogin'], { parameter: 'providerId', from: '$response.body#/data/0/id' }) } },
      handler(ctx) {
        ctx.body = { data: services.providers.list() };
      },
    }),
    defineRoute<ProviderParams>({
      namespace: 'iam', method: 'POST', path: '/auth/login/:providerId', operationId: 'iam.auth.providerLogin',
      summary: 'Starts a sign-in with a provider',
      description: 'Answers the provider URL to send the browser to (authorization code with PKCE S256, state and nonce). '
        + 'The state works once, within AUTH_PROVIDER_STATE_TTL_SECONDS. An unknown provider is 404.',
      auth: 'public',
      schemas: { params: providerParams, response: { 200: redirectResponse } },
      async handler(ctx) {
        ctx.body = await services.providers.begin({ purpose: 'login', providerId: ctx.guard.params.providerId });
      },
    }),
    defineRoute<ProviderParams, CallbackQuery>({
      namespace: 'iam', method: 'GET', path: '/auth/callback/:providerId', operationId: 'iam.auth.providerCallback',
      summary: 'Completes a sign-in or a link with the provider\'s code and state',
      description: 'A sign-in answers a token pair or the tenant-selection result; a first sign-in creates the account '
        + 'and its tenant. A link flow needs the bearer token of the account that started it and answers the link. '
        + 'An unknown, used or expired state, a refused code or an invalid ID token is 401.',
      auth: 'public',
      // It spends the state and the code: a retry could only fail.
      idempotent: false,
      schemas: { params: providerParams, query: callbackQuery, response: { 200: callbackResponse } },
      async handler(ctx) {
        ctx.body = await completeCallback(services, ctx.guard.params.providerId, ctx.guard.query, ctx.get('authorization'));
      },
    }),
    defineRoute<UserParams>({
      namespace: 'iam', method: 'GET', path: '/users/:id/providers', operationId: 'iam.users.providers',
      summary: 'The provider links of an account',
      description: 'The account itself, or a holder of users.list in a tenant the account belongs to.',
      auth: 'bearer',
      schemas: { params: userParams, response: { 200: providerLinkList } },
      async handler(ctx) {
        ctx.body = { data: await listLinks(services, authOf(ctx), ctx.guard.params.id) };
      },
    }),
    defineRoute<UserProviderParams>({
      namespace: 'iam', method: 'POST', path: '/users/:id/providers/:providerId', operationId: 'iam.users.linkProvider',
      summary: 'Starts linking a provider to the own account',
      description: 'Answers the provider URL; the callback, called with the same bearer token, links the identity. '
        + 'Only the account holder may link. 409 provider-already-linked when the identity belongs to another account.',
      auth: 'bearer',
      schemas: { params: userProviderParams, response: { 200: redirectResponse } },
      async handler(ctx) {
        ctx.body = await startLink(services, authOf(ctx), ctx.guard.params.id, ctx.guard.params.providerId);
      },
    }),
    defineRoute<UserProviderParams>({
      namespace: 'iam', method: 'DELETE', path: '/users/:id/providers/:providerId', operationId: 'iam.users.unlinkProvider',
      summary: 'Removes a provider link',
      description: 'The account itself, or a holder of users.update. 400 last-provider when it is the only way to sign in.',
      auth: 'bearer',
      schemas: { params: userProviderParams, response: { 204: null } },
      async handler(ctx) {
        await unlink(services, authOf(ctx), ctx.guard.params.id, ctx.guard.params.providerId);
        ctx.status = 204;
      },
    }),
  ];
}
