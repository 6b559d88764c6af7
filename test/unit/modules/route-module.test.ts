import Joi from 'joi';
import { defineRoute, RouteConfigurationError, RouteRegistry } from '../../../api/http/route-registry';

describe('a route\'s module', () => {
  const route = (auth: 'public' | 'bearer') => defineRoute({
    namespace: 'data', method: 'GET', path: '/things', operationId: `things.${auth}`, summary: 'Things', auth, module: 'crm',
    schemas: { response: { 200: Joi.object({}) } },
    handler: () => undefined,
  });

  it('is checked for the caller\'s tenant, so it needs a bearer route', () => {
    expect(() => new RouteRegistry([route('public')])).toThrow(RouteConfigurationError);
    expect(() => new RouteRegistry([route('public')])).toThrow(/a module needs auth: 'bearer'/);
    expect(new RouteRegistry([route('bearer')]).routes).toHaveLength(1);
  });
});
