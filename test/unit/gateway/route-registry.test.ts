import Joi from 'joi';
import { buildOpenApiDocument, buildOpenApiDocuments } from '../../../api/openapi/document';
import { defineRoute, feeds, RouteConfigurationError, RouteRegistry, type AnyRoute } from '../../../api/http/route-registry';

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
    ['links for a status not declared', [route({
      schemas: { params: Joi.object({ thingId: Joi.string() }), response: { 200: ok }, links: { 201: feeds(['things.get']) } },
    })], /links for undeclared status 201/],
  ])('refuses %s at start-up', (_case, routes, message) => {
    expect(() => new RouteRegistry(routes)).toThrow(RouteConfigurationError);
    expect(() => new RouteRegistry(routes)).toThrow(message);
  });
});

describe('OpenAPI links (api/openapi/document.ts)', () => {
  const create = (links: AnyRoute['schemas']['links']) => route({
    method: 'POST', path: '/things', operationId: 'things.create',
    schemas: { body: Joi.object({ name: Joi.string() }), response: { 201: Joi.object({ id: Joi.string() }) }, links },
  });
  const read = route({ operationId: 'things.get' });
  const move = route({
    method: 'POST', path: '/moves', operationId: 'moves.create',
    schemas: { body: Joi.object({ fromThingId: Joi.string() }), response: { 200: ok } },
  });

  it('renders each link as a standard Link Object under its response, named by its target', () => {
    const links = { 201: { ...feeds(['things.get'], { parameter: 'thingId' }), 'moves.create': { requestBody: { fromThingId: '$response.body#/id' } } } };
    const document = buildOpenApiDocument('gateway', [create(links), read, move], '1');
    const responses = document.paths['/things'].post as { responses: Record<string, { links?: unknown }> };
    expect(responses.responses[201].links).toEqual({
      'things.get': { operationId: 'things.get', parameters: { thingId: '$response.body#/id' } },
      'moves.create': { operationId: 'moves.create', requestBody: { fromThingId: '$response.body#/id' } },
    });
  });

  it.each([
    ['an operation of no route', { 201: feeds(['things.gone']) }, /link to things.gone: no such operation in the gateway document/],
    ['a parameter the target does not have', { 201: feeds(['things.get']) }, /things.get has no parameter id/],
    ['a body field the target does not have', { 201: { 'moves.create': { requestBody: { toThingId: '$response.body#/id' } } } }, /the body of moves.create has no field toThingId/],
  ])('refuses a link to %s when the documents are built (start-up)', (_case, links, message) => {
    expect(() => buildOpenApiDocument('gateway', [create(links), read, move], '1')).toThrow(message);
  });

  it('refuses a link to an operation of another namespace: each document stands alone', () => {
    const registry = new RouteRegistry([create({ 201: feeds(['things.get'], { parameter: 'thingId' }) }), route({ operationId: 'things.get', namespace: 'money' })]);
    expect(() => buildOpenApiDocuments(registry, '1')).toThrow(/link to things.get: no such operation in the gateway document/);
  });
});
