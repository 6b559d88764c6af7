import Joi from 'joi';
import { defineRoute, RouteConfigurationError, RouteRegistry, type AnyRoute } from '../../../api/http/route-registry';

const ok = Joi.object({ ok: Joi.boolean() });

function route(overrides: Partial<AnyRoute> = {}): AnyRoute {
  return defineRoute({
    namespace: 'gateway',
    method: 'GET',
    path: '/things/:thingId',
    operationId: `things.get.${Math.random()}`,
    summary: 'A thing',
    auth: 'bearer',
    schemas: { params: Joi.object({ thingId: Joi.string().required() }), response: { 200: ok } },
    handler: () => undefined,
    ...overrides,
  });
}

describe('route registry', () => {
  it('accepts well-formed routes and groups them by namespace', () => {
    const registry = new RouteRegistry([route(), route({ namespace: 'money', path: '/wallets', schemas: { response: { 200: ok } } })]);
    expect(registry.inNamespace('gateway')).toHaveLength(1);
    expect(registry.inNamespace('money')).toHaveLength(1);
    expect(registry.inNamespace('iam')).toHaveLength(0);
  });

  it.each([
    ['the same method and path twice', [route(), route()], /declared twice/],
    ['a reused operationId', [route({ operationId: 'x' }), route({ operationId: 'x', method: 'DELETE' })], /operationId x reused/],
    ['a parameter as the first segment', [route({ path: '/:thingId' })], /first path segment must be literal/],
    ['no first segment', [route({ path: '/', schemas: { response: { 200: ok } } })], /first path segment must be literal/],
    ['a path parameter without a schema', [route({ schemas: { response: { 200: ok } } })], /path parameters \[thingId\] differ/],
    ['a params schema key not in the path', [route({ path: '/things' })], /differ from the params schema \[thingId\]/],
    ['an unknown namespace', [route({ namespace: 'nope' as AnyRoute['namespace'] })], /unknown namespace/],
    ['no declared response', [route({ schemas: { params: Joi.object({ thingId: Joi.string() }), response: {} } })], /no response declared/],
    ['a streamed body on a GET', [route({ streamedBody: { mediaType: 'multipart/form-data', schema: Joi.object() } })], /streamed body/],
    ['a streamed body beside a JSON body', [route({
      method: 'POST', streamedBody: { mediaType: 'multipart/form-data', schema: Joi.object() },
      schemas: { params: Joi.object({ thingId: Joi.string() }), body: Joi.object(), response: { 200: ok } },
    })], /streamed body/],
    ['bytes for a status not declared', [route({
      schemas: { params: Joi.object({ thingId: Joi.string() }), response: { 200: ok }, bytes: { 206: '*/*' } },
    })], /bytes for undeclared status 206/],
  ])('refuses %s at start-up', (_case, routes, message) => {
    expect(() => new RouteRegistry(routes)).toThrow(RouteConfigurationError);
    expect(() => new RouteRegistry(routes)).toThrow(message);
  });
});
