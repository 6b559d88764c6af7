import Joi from 'joi';
import { NAMESPACES, defineRoute } from '../../../api/http/route-registry';
import { buildOpenApiDocument } from '../../../api/openapi/document';
import { newId } from '../../../common/ids';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { call } from '../../helpers/http';

/** The OpenAPI documents are generated from the same registry the router serves. */
let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

type Doc = {
  openapi: string;
  info: { title: string; version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown>; security: unknown[] }>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

const HTTP_VERBS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** Every local $ref in the document points at something that exists. */
function danglingRefs(doc: unknown): string[] {
  const refs: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') refs.push(value);
        else walk(value);
      }
    }
  };
  walk(doc);
  return refs.filter((ref) => {
    const target = ref.replace(/^#\//, '').split('/').reduce<unknown>((at, part) => (at as Record<string, unknown>)?.[part], doc);
    return target === undefined;
  });
}

/** Every regular expression of the document: `pattern` values and `patternProperties` keys. */
function patternsOf(doc: unknown): string[] {
  const patterns: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'pattern' && typeof value === 'string') patterns.push(value);
        else if (key === 'patternProperties' && value && typeof value === 'object') patterns.push(...Object.keys(value));
        walk(value);
      }
    }
  };
  walk(doc);
  return patterns;
}

describe.each(NAMESPACES)('the %s namespace', (namespace) => {
  it('serves a valid OpenAPI 3.1 document listing exactly its registered routes', async () => {
    const { status, headers, body } = await call<Doc>(`${gateway.baseUrl}/api/v1/${namespace}/openapi.json`);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    expect(body.openapi).toBe('3.1.0');
    expect(body.info).toMatchObject({ title: expect.stringContaining(namespace), version: gateway.config.version });
    expect(body.servers.map((server) => server.url)).toEqual(['/v1', '/api/v1']);
    expect(body.components.schemas.Problem).toMatchObject({ type: 'object', properties: expect.objectContaining({ type: expect.any(Object) }) });
    expect(danglingRefs(body)).toEqual([]);

    const operations = Object.entries(body.paths).flatMap(([path, item]) => Object.entries(item).map(([verb, operation]) => {
      expect(path.startsWith('/')).toBe(true);
      expect(HTTP_VERBS.has(verb)).toBe(true);
      expect(Object.keys(operation.responses).length).toBeGreaterThan(0);
      return `${verb.toUpperCase()} ${path} ${operation.operationId}`;
    }));
    // A catalogue-driven route (the data records) is documented as its concrete operations instead.
    const registered = gateway.routes.filter((route) => route.namespace === namespace)
      .flatMap((route) => (route.documentedAs?.() ?? [route]).map((operation) => ({ ...operation, method: route.method })))
      .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')} ${route.operationId}`);
    expect(operations.sort()).toEqual(registered.sort());
  });

  it('publishes every pattern as an ECMA-262 regular expression without flags', async () => {
    const { body } = await call<Doc>(`${gateway.baseUrl}/api/v1/${namespace}/openapi.json`);
    for (const pattern of patternsOf(body)) {
      // joi-to-json published `source/flags` (`^[^\p{Cc}]+$/u`): an unescaped slash has no place in a source.
      expect(pattern).not.toMatch(/(^|[^\\])\/[a-z]*$/);
      // JSON Schema validators compile patterns with u, other tools without: both must read it.
      expect(() => new RegExp(pattern)).not.toThrow();
      expect(() => new RegExp(pattern, 'u')).not.toThrow();
    }
  });

  it('serves Swagger UI and Redoc pages for it, with their assets served locally', async () => {
    const swagger = await call(`${gateway.baseUrl}/api-docs/${namespace}`);
    expect(swagger.status).toBe(200);
    expect(swagger.headers.get('content-type')).toMatch(/^text\/html/);
    expect(swagger.body).toContain(`/api/v1/${namespace}/openapi.json`);
    expect(swagger.body).not.toMatch(/https?:\/\//);

    const redoc = await call(`${gateway.baseUrl}/api-docs/${namespace}/redoc`);
    expect(redoc.status).toBe(200);
    expect(redoc.body).toContain(`spec-url="/api/v1/${namespace}/openapi.json"`);
    expect(redoc.body).not.toMatch(/https?:\/\//);
  });
});

describe('documentation routes', () => {
  it('documents GET /gateway/hello from its joi schema, as a public route', async () => {
    const { body } = await call<Doc>(`${gateway.baseUrl}/api/v1/gateway/openapi.json`);
    const hello = body.paths['/gateway/hello'].get as unknown as Record<string, unknown>;
    expect(hello).toMatchObject({
      operationId: 'gateway.hello',
      security: [],
      responses: {
        200: { content: { 'application/json': { schema: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } } } },
        default: { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } },
      },
    });
  });

  it('refuses to document a pattern with flags, which no OpenAPI tool reads', () => {
    const route = defineRoute({
      namespace: 'gateway', method: 'GET', path: '/flagged', operationId: 'test.flagged', summary: 'A flagged pattern', auth: 'public',
      schemas: { query: Joi.object({ name: Joi.string().pattern(/^[^\p{Cc}]+$/u) }), response: { 200: null } },
      handler() { /* never served */ },
    });
    expect(() => buildOpenApiDocument('gateway', [route], 'test')).toThrow(/carries no flags/);
  });

  it('documents the declared headers as header parameters: Idempotency-Key (UUID v4 or v7) and the webhook signatures', async () => {
    type Parameter = { name: string; in: string; required: boolean; schema: { pattern?: string } };
    const operation = async (namespace: string, path: string, verb: string) => {
      const { body } = await call<Doc>(`${gateway.baseUrl}/api/v1/${namespace}/openapi.json`);
      return body.paths[path][verb] as unknown as { parameters: Parameter[] };
    };
    const headers = (parameters: Parameter[]) => parameters.filter((parameter) => parameter.in === 'header');

    const credit = headers((await operation('money', '/wallets/{id}/credit', 'post')).parameters);
    expect(credit).toEqual([{ name: 'Idempotency-Key', in: 'header', required: true, description: expect.any(String), schema: expect.objectContaining({ type: 'string' }) }]);
    const keyPattern = new RegExp(credit[0].schema.pattern!);
    expect(keyPattern.test(newId())).toBe(true);
    expect(keyPattern.test('e2bc1114-2734-327b-ad8d-cd4e3cf83276')).toBe(false); // v3
    expect(keyPattern.test('wallet-create-1')).toBe(false);
    expect(headers((await operation('money', '/wallets', 'post')).parameters)).toMatchObject([{ name: 'Idempotency-Key', required: false }]);
    expect(headers((await operation('money', '/wallets', 'get')).parameters)).toEqual([]);
    expect(headers((await operation('billing', '/billing/webhooks/{provider}', 'post')).parameters).map((parameter) => [parameter.name, parameter.required]))
      .toEqual([['Stripe-Signature', false], ['Paddle-Signature', false]]);
  });

  it.each([
    ['swagger-ui-bundle.js', /javascript/],
    ['swagger-ui.css', /text\/css/],
    ['redoc.standalone.js', /javascript/],
  ])('serves the viewer asset %s', async (file, type) => {
    const response = await fetch(`${gateway.baseUrl}/api-docs/assets/${file}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(type);
    expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
  });

  it('answers an unknown namespace or asset with a 404 problem', async () => {
    for (const path of ['/api/v1/nope/openapi.json', '/api-docs/nope', '/api-docs/assets/package.json', '/api-docs/assets/constructor']) {
      const response = await call(`${gateway.baseUrl}${path}`);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });
});
