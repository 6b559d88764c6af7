import { authOf } from '../../context';
import { callerOf } from '../caller';
import type { PageQuery } from '../../../common/pagination';
import { createApiKey, getApiKey, listApiKeys, revokeKey, type ApiKeyCaller, type ApiKeysDeps } from '../../../services/identity/api-keys';
import { defineRoute, feeds, type AnyRoute, type RouteContext } from '../../http/route-registry';
import {
  apiKey, apiKeyIdParams, apiKeyPage, apiKeyPageQuery, createApiKeyBody, createdApiKey, type ApiKeyIdParams, type CreateApiKeyBody,
} from './api-keys.schemas';

type NoParams = Record<string, never>;

const keyCallerOf = (ctx: RouteContext<unknown, unknown, unknown>): ApiKeyCaller => ({ ...callerOf(ctx), auth: authOf(ctx) });

/**
 * API keys, the tenant's service accounts (issue 35; docs/decisions/identity.md, API keys), in the
 * iam document. Every route needs api_keys.manage; another tenant's key is 404 like an unknown one.
 */
export function apiKeyRoutes(deps: ApiKeysDeps): AnyRoute[] {
  return [
    defineRoute<NoParams, NoParams, CreateApiKeyBody>({
      namespace: 'iam', method: 'POST', path: '/api-keys', operationId: 'iam.apiKeys.create',
      summary: 'Creates an API key; its secret is in this answer only',
      description: 'The key acts for the tenant with exactly the permissions given, each of which the caller must hold (403 forbidden '
        + 'otherwise); unknown, platform-only (system.*) or archived keys and * are 400. Only a hash of the secret is stored.',
      // A key may create keys (never with more than it holds itself), so keys stay allowed; a person needs a recent sign-in.
      auth: 'bearer', permission: 'api_keys.manage', stepUp: { apiKeys: 'allowed' },
      schemas: { body: createApiKeyBody, response: { 201: createdApiKey }, links: { 201: feeds(['iam.apiKeys.get', 'iam.apiKeys.revoke']) } },
      async handler(ctx) {
        const { row, key } = await createApiKey(deps, keyCallerOf(ctx), ctx.guard.body);
        ctx.body = { ...row, key };
        ctx.status = 201;
      },
    }),
    defineRoute<NoParams, PageQuery>({
      namespace: 'iam', method: 'GET', path: '/api-keys', operationId: 'iam.apiKeys.list',
      summary: 'The tenant\'s live API keys, a page at a time (never their secrets)', auth: 'bearer', permission: 'api_keys.manage',
      schemas: { query: apiKeyPageQuery, response: { 200: apiKeyPage } },
      async handler(ctx) {
        ctx.body = await listApiKeys(deps, authOf(ctx), { size: ctx.guard.query.page_size, token: ctx.guard.query.page_token });
      },
    }),
    defineRoute<ApiKeyIdParams>({
      namespace: 'iam', method: 'GET', path: '/api-keys/:id', operationId: 'iam.apiKeys.get',
      summary: 'A live API key (never its secret); a revoked one is 404', auth: 'bearer', permission: 'api_keys.manage',
      schemas: { params: apiKeyIdParams, response: { 200: apiKey } },
      async handler(ctx) {
        ctx.body = await getApiKey(deps, authOf(ctx), ctx.guard.params.id);
      },
    }),
    defineRoute<ApiKeyIdParams>({
      namespace: 'iam', method: 'DELETE', path: '/api-keys/:id', operationId: 'iam.apiKeys.revoke',
      summary: 'Revokes an API key',
      description: 'Every gateway refuses the key with 401 within a second of the answer. A key revoked already is 404.',
      auth: 'bearer', permission: 'api_keys.manage',
      schemas: { params: apiKeyIdParams, response: { 204: null } },
      async handler(ctx) {
        await revokeKey(deps, keyCallerOf(ctx), ctx.guard.params.id);
        ctx.status = 204;
      },
    }),
  ];
}
