import { request } from 'node:http';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { call, someLoopback } from '../../helpers/http';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { addMembership, bearer, post, registerAccount } from '../../helpers/identity';

/**
 * The gateway rate limit (docs/reference/gateway.md#rule-10) against the real Redis: two gateways with low
 * limits share one count, the admin limit is higher, and a refusal is a 429 problem with
 * Retry-After. Accounts are made on a gateway with the test defaults (limits out of the way).
 */
const LOW = { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_ADMIN_PER_MINUTE: '8' };

let registrar: TestGateway;
let first: TestGateway;
let second: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  [registrar, first, second] = await Promise.all([
    startTestGateway(), startTestGateway({ env: LOW }), startTestGateway({ env: LOW }),
  ]);
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'rate-limit-test-owner' });
});

afterAll(async () => {
  await Promise.all([registrar?.close(), first?.close(), second?.close()]);
  await owner?.end();
});

const me = (gateway: TestGateway, token: string) => call(`${gateway.baseUrl}/v1/auth/me`, { headers: bearer(token) });

async function memberToken(): Promise<string> {
  const tenant = await registerAccount(registrar);
  const member = await registerAccount(registrar);
  await addMembership(owner, tenant.tenant.id, member.user.id, 'member');
  const switched = await post(registrar, '/auth/switch-tenant', { tenantId: tenant.tenant.id }, bearer(member.accessToken));
  return String(switched.body.accessToken);
}

/** A POST from a chosen loopback address, so the IP-keyed counter is this test's own. */
function postFrom(localAddress: string, url: string, body: unknown): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', localAddress, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('rate limits', () => {
  it('counts a user across gateway processes and refuses the request past the limit with a 429 problem', async () => {
    const token = await memberToken();
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const response = await me(i % 2 === 0 ? first : second, token);
      statuses.push(response.status);
      remaining.push(String(response.headers.get('x-ratelimit-remaining')));
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    const refused = await me(second, token);
    expect(refused.status).toBe(429);
    expect(refused.body.type).toBe(second.problemType('rate-limit-exceeded'));
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(120);
    expect(refused.body.retryAfter).toBe(retryAfter);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('5');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(1);
  });

  it('counts a concurrent burst exactly: the counts of one tick leave as one pipeline, each still atomic', async () => {
    const token = await memberToken();
    const statuses = (await Promise.all(Array.from({ length: 9 }, () => me(first, token)))).map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(4);
  });

  it('gives the owner and admin roles the admin limit', async () => {
    const tenant = await registerAccount(registrar);
    const statuses: number[] = [];
    for (let i = 0; i < 9; i += 1) statuses.push((await me(first, tenant.accessToken)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429]);
  });

  it('charges public routes to the client address', async () => {
    const address = someLoopback();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      statuses.push((await postFrom(address, `${first.baseUrl}/v1/auth/refresh`, { refreshToken: 'not-a-token' })).status);
    }
    expect(statuses.slice(0, 5).every((status) => status === 401)).toBe(true);
    expect(statuses[5]).toBe(429);
    // Another address still has its whole allowance.
    expect((await postFrom('127.0.0.1', `${registrar.baseUrl}/v1/auth/refresh`, { refreshToken: 'not-a-token' })).status).toBe(401);
  });
});

describe('GET /metrics', () => {
  it('exposes request counts by route pattern, latency, breaker states and rate-limit refusals', async () => {
    const token = await memberToken();
    for (let i = 0; i < 6; i += 1) await me(first, token);
    const response = await call<string>(`${first.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(response.body).toMatch(/http_requests_total\{method="GET",route="\/v1\/auth\/me",status="200"\} \d+/);
    expect(response.body).toMatch(/http_requests_total\{method="GET",route="\/v1\/auth\/me",status="429"\} \d+/);
    expect(response.body).toMatch(/http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/v1\/auth\/me"\}/);
    expect(response.body).toMatch(/rate_limit_rejections_total\{group="user"\} [1-9]/);
    expect(response.body).toContain('# TYPE circuit_breaker_state gauge');
  });
});
