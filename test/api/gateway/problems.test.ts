import Joi from 'joi';
import { defineRoute, type AnyRoute } from '../../../api/http/route-registry';
import { pageOf, pageQuery } from '../../../api/http/pagination';
import { type PageQuery } from '../../../common/pagination';
import { newId } from '../../../common/ids';
import { Problem, problems } from '../../../common/problems';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { call } from '../../helpers/http';

/**
 * Every error is an RFC 9457 problem with instance and traceId, whatever produced it: the router
 * (404, 405), the body guard (400, 413, 415), the validation guard, a handler, or a downstream.
 */
let gateway: TestGateway;

interface Echo { name: string; count?: number }

const testRoutes: AnyRoute[] = [
  defineRoute<Record<string, never>, Record<string, never>, Echo>({
    namespace: 'gateway', method: 'POST', path: '/test/echo', operationId: 'test.echo', summary: 'Echoes its body', auth: 'public',
    schemas: {
      body: Joi.object<Echo>({ name: Joi.string().max(10).required(), count: Joi.number().integer().min(1).max(5) }),
      response: { 200: Joi.object({ name: Joi.string().required(), count: Joi.number() }) },
    },
    handler(ctx) { ctx.body = ctx.guard.body; },
  }),
  defineRoute<Record<string, never>, PageQuery>({
    namespace: 'gateway', method: 'GET', path: '/test/pages', operationId: 'test.pages', summary: 'A paginated list', auth: 'public',
    schemas: { query: Joi.object(pageQuery), response: { 200: pageOf(Joi.object({ size: Joi.number() })) } },
    handler(ctx) { ctx.body = { data: [{ size: ctx.guard.query.page_size }], next_page_token: '' }; },
  }),
  defineRoute<{ id: string }>({
    namespace: 'gateway', method: 'GET', path: '/test/items/:id', operationId: 'test.items.get', summary: 'An item', auth: 'public',
    schemas: { params: Joi.object({ id: Joi.string().required() }), response: { 200: Joi.object({ id: Joi.string().required() }) } },
    handler(ctx) { ctx.body = { id: ctx.guard.params.id }; },
  }),
  defineRoute({
    namespace: 'gateway', method: 'POST', path: '/test/items/special', operationId: 'test.items.special',
    summary: 'A literal sibling of /test/items/:id', auth: 'public', schemas: { response: { 204: null } },
    handler(ctx) { ctx.status = 204; },
  }),
  defineRoute({
    namespace: 'gateway', method: 'GET', path: '/test/drift', operationId: 'test.drift', summary: 'Breaks its schema', auth: 'public',
    schemas: { response: { 200: Joi.object({ message: Joi.string().required() }) } },
    handler(ctx) { ctx.body = { message: 42 }; },
  }),
  defineRoute({
    namespace: 'gateway', method: 'GET', path: '/test/crash', operationId: 'test.crash', summary: 'Throws', auth: 'public',
    schemas: { response: { 200: null } },
    handler() { throw new Error('connection string postgres://secret@db failed'); },
  }),
  defineRoute({
    namespace: 'gateway', method: 'GET', path: '/test/temporal/workflow', operationId: 'test.temporal.workflow',
    summary: 'Describes a workflow that does not exist', auth: 'public', schemas: { response: { 200: null } },
    async handler(ctx) {
      ctx.body = await gateway.runtime.temporal()!.client.workflow.getHandle(`missing-${newId()}`).describe();
    },
  }),
  defineRoute({
    namespace: 'gateway', method: 'GET', path: '/test/temporal/namespace', operationId: 'test.temporal.namespace',
    summary: 'Asks Temporal about an unknown namespace (raw gRPC NOT_FOUND)', auth: 'public', schemas: { response: { 200: null } },
    async handler(ctx) {
      ctx.body = await gateway.runtime.temporal()!.connection.workflowService.describeNamespace({ namespace: `missing-${newId()}` });
    },
  }),
];

beforeAll(async () => {
  gateway = await startTestGateway({ routes: testRoutes, waitUntilReady: true });
});

afterAll(async () => {
  await gateway?.close();
});

const url = (path: string) => `${gateway.baseUrl}${path}`;
const json = (body: unknown): RequestInit => ({
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
});

function expectProblem(response: { status: number; headers: Headers; body: Record<string, unknown> }, status: number, suffix: string, instance: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ type: gateway.problemType(suffix), status, instance, title: expect.any(String), detail: expect.any(String) });
  // The traceId of the body is the trace of the traceparent answered with.
  const traceparent = response.headers.get('traceparent') ?? '';
  expect(response.body.traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(traceparent.split('-')[1]).toBe(response.body.traceId);
}

describe('routing errors', () => {
  it('answers an unknown route with 404 not-found', async () => {
    expectProblem(await call(url('/v1/nothing/here')), 404, 'not-found', '/v1/nothing/here');
    expectProblem(await call(url('/nowhere')), 404, 'not-found', '/nowhere');
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const response = await call(url('/v1/gateway/hello'), { method: 'DELETE' });
    expectProblem(response, 405, 'method-not-allowed', '/v1/gateway/hello');
    expect(response.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD']);
  });

  it('lists in Allow only the methods of the pattern that applies: a literal segment wins over a parameter', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await call(url('/v1/test/items/special'), { method });
      expectProblem(response, 405, 'method-not-allowed', '/v1/test/items/special');
      expect(response.headers.get('allow')).toBe('POST');
    }
    expect((await call(url('/v1/test/items/special'), { method: 'OPTIONS' })).headers.get('allow')).toBe('POST, OPTIONS');
    expect((await call(url('/v1/test/items/special'), { method: 'POST' })).status).toBe(204);
    expect(await call(url('/v1/test/items/other'))).toMatchObject({ status: 200, body: { id: 'other' } });
    expect((await call(url('/v1/test/items/other'), { method: 'DELETE' })).headers.get('allow')).toBe('HEAD, GET');
  });

  it('answers OPTIONS with the allowed methods', async () => {
    const response = await call(url('/v1/gateway/hello'), { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(response.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS']);
  });

  it('serves every route under /v1 and /api/v1 alike', async () => {
    const v1 = await call(url('/v1/gateway/hello'));
    const alias = await call(url('/api/v1/gateway/hello'));
    expect(v1).toMatchObject({ status: 200, body: { message: expect.any(String) } });
    expect(alias).toMatchObject({ status: 200, body: v1.body });
    expectProblem(await call(url('/api/v1/gateway/nope')), 404, 'not-found', '/api/v1/gateway/nope');
  });

  it('matches a path regardless of case and of a trailing slash, under both prefixes', async () => {
    for (const path of ['/V1/Gateway/Hello', '/v1/gateway/hello/', '/API/v1/gateway/HELLO']) {
      expect(await call(url(path))).toMatchObject({ status: 200, body: { message: expect.any(String) } });
    }
    expect(await call(url('/v1/TEST/items/Other'))).toMatchObject({ status: 200, body: { id: 'Other' } });
    expectProblem(await call(url('/v2/gateway/hello')), 404, 'not-found', '/v2/gateway/hello');
  });
});

describe('request bodies', () => {
  it('refuses malformed JSON with 400 validation-error', async () => {
    const response = await call(url('/v1/test/echo'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name": ' });
    expectProblem(response, 400, 'validation-error', '/v1/test/echo');
    expect(response.body.errors).toEqual([{ field: 'body', code: 'INVALID_FORMAT', message: expect.any(String) }]);
  });

  it('refuses a body that is not JSON with 415', async () => {
    const response = await call(url('/v1/test/echo'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'name=x' });
    expectProblem(response, 415, 'unsupported-media-type', '/v1/test/echo');
  });

  it('refuses a declared Content-Length above the limit with 413, before reading the body', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(gateway.config.api.bodyLimitBytes) });
    const response = await call(url('/v1/test/echo'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    expectProblem(response, 413, 'payload-too-large', '/v1/test/echo');
  });

  it('cuts off a chunked body at the limit with 413', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > gateway.config.api.bodyLimitBytes * 2) controller.close();
        else { sent += chunk.length; controller.enqueue(chunk); }
      },
    });
    const response = await call(url('/v1/test/echo'), {
      method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half',
    });
    expectProblem(response, 413, 'payload-too-large', '/v1/test/echo');
  });

  it('requires a declared body', async () => {
    const response = await call(url('/v1/test/echo'), { method: 'POST' });
    expectProblem(response, 400, 'validation-error', '/v1/test/echo');
    expect(response.body.errors).toEqual([{ field: 'body', code: 'REQUIRED', message: expect.any(String) }]);
  });

  it('hands the validated body to the handler', async () => {
    expect(await call(url('/v1/test/echo'), json({ name: 'ada', count: 2 }))).toMatchObject({ status: 200, body: { name: 'ada', count: 2 } });
  });
});

describe('validation errors', () => {
  it('lists every failing field with a code', async () => {
    const response = await call(url('/v1/test/echo'), json({ count: 9, colour: 'red', name: 'far too long a name' }));
    expectProblem(response, 400, 'validation-error', '/v1/test/echo');
    const errors = response.body.errors as { field: string; code: string; message: string }[];
    expect(errors.map(({ field, code }) => ({ field, code }))).toEqual(expect.arrayContaining([
      { field: 'name', code: 'TOO_LONG' },
      { field: 'count', code: 'OUT_OF_RANGE' },
      { field: 'colour', code: 'UNKNOWN_FIELD' },
    ]));
    expect(errors).toHaveLength(3);
    for (const error of errors) expect(error.message).toEqual(expect.any(String));
  });

  it('refuses page_size 101 instead of capping it, and defaults it to 20', async () => {
    const tooBig = await call(url('/v1/test/pages?page_size=101'));
    expectProblem(tooBig, 400, 'validation-error', '/v1/test/pages');
    expect(tooBig.body.errors).toEqual([{ field: 'page_size', code: 'OUT_OF_RANGE', message: expect.any(String) }]);
    expect((await call(url('/v1/test/pages?page_size=100'))).body).toEqual({ data: [{ size: 100 }], next_page_token: '' });
    expect((await call(url('/v1/test/pages'))).body).toEqual({ data: [{ size: 20 }], next_page_token: '' });
  });

  it('refuses unknown query parameters', async () => {
    const response = await call(url('/v1/gateway/hello?verbose=1'));
    expectProblem(response, 400, 'validation-error', '/v1/gateway/hello');
    expect(response.body.errors).toEqual([{ field: 'verbose', code: 'UNKNOWN_FIELD', message: expect.any(String) }]);
  });
});

describe('server-side failures', () => {
  it('answers a response that breaks its declared schema with 500 internal-error', async () => {
    const response = await call(url('/v1/test/drift'));
    expectProblem(response, 500, 'internal-error', '/v1/test/drift');
    expect(JSON.stringify(response.body)).not.toContain('message" must be');
  });

  it('answers an unexpected error with 500 and does not leak its cause', async () => {
    const response = await call(url('/v1/test/crash'));
    expectProblem(response, 500, 'internal-error', '/v1/test/crash');
    expect(JSON.stringify(response.body)).not.toMatch(/secret|postgres|stack/);
  });

  it('maps Temporal’s workflow-not-found to 404 not-found', async () => {
    expectProblem(await call(url('/v1/test/temporal/workflow')), 404, 'not-found', '/v1/test/temporal/workflow');
  });

  it('maps a raw gRPC NOT_FOUND from Temporal to 404 not-found', async () => {
    expectProblem(await call(url('/v1/test/temporal/namespace')), 404, 'not-found', '/v1/test/temporal/namespace');
  });
});

describe('the problem builder', () => {
  it('refuses an extension member that would overwrite a standard member', () => {
    for (const member of ['type', 'title', 'status', 'detail', 'instance', 'traceId']) {
      expect(() => new Problem('hold-settled', 'x', { [member]: 'canceled' })).toThrow(/overwrite standard members/);
    }
    expect(problems.holdSettled('h1', 'canceled').toJSON('https://p', '/v1/holds/h1/cancel', 't'))
      .toMatchObject({ status: 400, holdStatus: 'canceled' });
  });
});

describe('request identity', () => {
  it('continues the caller’s trace and echoes its request id', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await call(url('/v1/unknown'), {
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, 'x-request-id': 'req-123' },
    });
    expect(response.body.traceId).toBe(traceId);
    expect(response.headers.get('traceparent')).toMatch(new RegExp(`^00-${traceId}-(?!00f067aa0ba902b7)[0-9a-f]{16}-01$`));
    expect(response.headers.get('x-request-id')).toBe('req-123');
  });

  it('starts a trace and a request id when the caller sends none', async () => {
    const response = await call(url('/v1/gateway/hello'));
    expect(response.headers.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
