import { NAMESPACES } from '../../api/http/route-registry';
import { startTestGateway, type TestGateway } from '../helpers/app';
import { call } from '../helpers/http';

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
    const registered = gateway.routes.filter((route) => route.namespace === namespace)
      .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')} ${route.operationId}`);
    expect(operations.sort()).toEqual(registered.sort());
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
