import { setTimeout as sleep } from 'node:timers/promises';
import Joi from 'joi';
import { defineRoute, type AnyRoute } from '../../../api/http/route-registry';
import { problems } from '../../../common/problems';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { call } from '../../helpers/http';
import { migrateSharedDatabase } from '../../helpers/db';
import { bearer, registerAccount } from '../../helpers/identity';

/**
 * Route calls under the resilience rules of docs/reference/gateway.md (rules 12 to 16), with test routes whose failures the test
 * controls: GET retried once, other methods never; a deadline (2 s here) answering 504; five
 * consecutive failures opening the namespace's breaker; a failing tenant isolated alone.
 */
jest.setTimeout(60_000);

/**
 * The deadline of the gateway under test: long enough for the routes that should succeed on a busy
 * machine; the slow routes sleep well past it (the deadline's timer always fires first).
 */
const DEADLINE_MS = 2000;
const PAST_DEADLINE_MS = 5000;

const calls = new Map<string, number>();
const failures = new Map<string, number>();
const ok = { 200: Joi.object({ calls: Joi.number().required() }) };

function countingRoute(method: 'GET' | 'POST', path: string, namespace: AnyRoute['namespace'], behave: (key: string) => Promise<void>): AnyRoute {
  return defineRoute({
    namespace, method, path, operationId: `test${method}${path.replace(/\W/g, '')}`, summary: 'test', auth: 'bearer',
    schemas: { query: Joi.object({ key: Joi.string().required() }), response: ok },
    async handler(ctx) {
      const { key } = ctx.guard.query as { key: string };
      calls.set(key, (calls.get(key) ?? 0) + 1);
      await behave(key);
      ctx.body = { calls: calls.get(key) };
    },
  });
}

/** Fails while the key has failures left. */
async function flaky(key: string): Promise<void> {
  const left = failures.get(key) ?? 0;
  if (left > 0) {
    failures.set(key, left - 1);
    throw new Error('downstream connection reset');
  }
}

const routes = [
  countingRoute('GET', '/test/flaky', 'gateway', flaky),
  countingRoute('POST', '/test/flaky', 'gateway', flaky),
  countingRoute('GET', '/test/slow', 'gateway', () => sleep(PAST_DEADLINE_MS)),
  countingRoute('GET', '/test/client-error', 'notify', async () => { throw problems.notFound('thing'); }),
  countingRoute('POST', '/test/broken', 'notify', flaky),
  countingRoute('POST', '/test/tenant', 'events', flaky),
  countingRoute('GET', '/test/crawl', 'data', () => sleep(PAST_DEADLINE_MS)),
  countingRoute('POST', '/test/quick', 'data', async () => undefined),
];

let gateway: TestGateway;
/** Accounts are made here: registration (Argon2id) must not race the short deadline of the gateway under test. */
let registrar: TestGateway;
let token: string;

beforeAll(async () => {
  await migrateSharedDatabase();
  [gateway, registrar] = await Promise.all([
    startTestGateway({ routes, env: { GRPC_CALL_TIMEOUT_MS: String(DEADLINE_MS), TENANT_BREAKER_MIN_REQUESTS: '6' } }),
    startTestGateway(),
  ]);
  token = (await registerAccount(registrar)).accessToken;
});

afterAll(() => Promise.all([gateway?.close(), registrar?.close()]));

const unique = () => Math.random().toString(36).slice(2);
const request = (method: string, path: string, key: string, as = token) =>
  call(`${gateway.baseUrl}/v1${path}?key=${key}`, { method, headers: bearer(as) });

describe('downstream calls', () => {
  it('retries a failed GET once after a short delay and answers its result', async () => {
    const key = unique();
    failures.set(key, 1);
    const response = await request('GET', '/test/flaky', key);
    expect(response.status).toBe(200);
    expect(calls.get(key)).toBe(2);
  });

  it('never retries a POST', async () => {
    const key = unique();
    failures.set(key, 1);
    const response = await request('POST', '/test/flaky', key);
    expect(response.status).toBe(500);
    expect(calls.get(key)).toBe(1);
  });

  it('answers 504 gateway-timeout when the handler passes the deadline (each GET attempt has its own)', async () => {
    const key = unique();
    const response = await request('GET', '/test/slow', key);
    expect(response.status).toBe(504);
    expect(response.body.type).toBe(gateway.problemType('gateway-timeout'));
    expect(calls.get(key)).toBe(2);
  });

  it('does not count 4xx answers as failures, nor retries them', async () => {
    const key = unique();
    expect((await request('GET', '/test/client-error', key)).status).toBe(404);
    expect(calls.get(key)).toBe(1);
    for (let i = 0; i < 6; i += 1) expect((await request('GET', '/test/client-error', unique())).status).toBe(404);
    expect(gateway.runtime.gateway.breakers.states()['service:notify']).toBe('closed');
  });

  it('opens the namespace breaker after five consecutive failures: 503 without calling the handler', async () => {
    const key = unique();
    failures.set(key, 100);
    for (let i = 0; i < 5; i += 1) expect((await request('POST', '/test/broken', key)).status).toBe(500);
    const refused = await request('POST', '/test/broken', key);
    expect(refused.status).toBe(503);
    expect(refused.body.type).toBe(gateway.problemType('service-unavailable'));
    expect(calls.get(key)).toBe(5);
    // Other namespaces are not affected, and the state is in /metrics.
    expect((await request('POST', '/test/flaky', unique())).status).toBe(200);
    const metrics = await call<string>(`${gateway.baseUrl}/metrics`);
    expect(metrics.body).toContain('circuit_breaker_state{downstream="service:notify"} 2');
  });

  it('charges a tenant\'s passed deadlines to that tenant alone: the namespace breaker stays closed for the others (issue 19)', async () => {
    const slow = await registerAccount(registrar);
    const other = await registerAccount(registrar);
    // One GET is two attempts, each past the deadline: six requests are twelve timeouts in a row.
    for (let i = 0; i < 6; i += 1) expect((await request('GET', '/test/crawl', unique(), slow.accessToken)).status).toBe(504);
    expect(gateway.runtime.gateway.breakers.states()['service:data']).toBe('closed');
    expect((await request('GET', '/test/crawl', unique(), slow.accessToken)).status).toBe(503);
    expect(gateway.runtime.gateway.tenantBreakers.isIsolated(slow.tenant.id)).toBe(true);
    expect((await request('POST', '/test/quick', unique(), other.accessToken)).status).toBe(200);
  });

  it('isolates a tenant whose requests mostly fail, and only that tenant', async () => {
    const failing = await registerAccount(registrar);
    const other = await registerAccount(registrar);
    const key = unique();
    failures.set(key, 6);
    // Interleaved successes of another tenant keep the namespace breaker closed (failures are not consecutive).
    for (let i = 0; i < 6; i += 1) {
      expect((await request('POST', '/test/tenant', key, failing.accessToken)).status).toBe(500);
      expect((await request('POST', '/test/tenant', unique(), other.accessToken)).status).toBe(200);
    }
    const refused = await request('GET', '/test/flaky', unique(), failing.accessToken);
    expect(refused.status).toBe(503);
    expect((await request('GET', '/test/flaky', unique(), other.accessToken)).status).toBe(200);
  });
});

