import { sql } from '../../../db/pool';
import { COMPONENTS } from '../../../api/health/report';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { call, waitFor } from '../../helpers/http';
import { addMembership, bearer, post, registerAccount } from '../../helpers/identity';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';

/** /health needs the admin role (docs/reference/gateway.md#rule-22): a tenant owner's token has it. */
async function adminToken(gateway: TestGateway): Promise<string> {
  return (await registerAccount(gateway)).accessToken;
}

/** The probes of docs/reference/gateway.md (rules 20 to 22) against the real stack, and against a stack with services missing. */
describe('probes against the running services', () => {
  let gateway: TestGateway;

  let token: string;

  beforeAll(async () => {
    await migrateSharedDatabase();
    gateway = await startTestGateway({ waitUntilReady: true });
    token = await adminToken(gateway);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('/live answers 200 {status: ok}', async () => {
    expect(await call(`${gateway.baseUrl}/live`)).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('/ready answers 200 {status: ready} once flags, connections and routes are in place', async () => {
    expect(await call(`${gateway.baseUrl}/ready`)).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  it('/health answers 401 without a token and 403 to a member', async () => {
    const anonymous = await call(`${gateway.baseUrl}/health`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.type).toBe(gateway.problemType('unauthorized'));

    const owner: DatabasePool = await createDbPool(ownerUrl(), { maxPoolSize: 1, name: 'health-test-owner' });
    try {
      const tenant = await registerAccount(gateway);
      const member = await registerAccount(gateway);
      await addMembership(owner, tenant.tenant.id, member.user.id, 'member');
      const switched = await post(gateway, '/auth/switch-tenant', { tenantId: tenant.tenant.id }, bearer(member.accessToken));
      const refused = await call(`${gateway.baseUrl}/health`, { headers: bearer(String(switched.body.accessToken)) });
      expect(refused.status).toBe(403);
      expect(refused.body.type).toBe(gateway.problemType('forbidden'));
    } finally {
      await owner.end();
    }
  });

  it('/health reports all eight components healthy with integer latencies', async () => {
    const { status, body } = await call(`${gateway.baseUrl}/health`, { headers: bearer(token) });
    expect(body).toMatchObject({ status: 'healthy', version: gateway.config.version, uptime: expect.stringMatching(/^(\d+h)?(\d+m)?\d+s$/) });
    expect(status).toBe(200);
    const components = body.components as Record<string, { status: string; latencyMs: unknown; error: unknown }>;
    expect(Object.keys(components).sort()).toEqual([...COMPONENTS].sort());
    for (const [name, component] of Object.entries(components)) {
      expect({ name, ...component }).toEqual({ name, status: 'healthy', latencyMs: expect.any(Number), error: null });
      expect(Number.isInteger(component.latencyMs)).toBe(true);
    }
  });

  it('opens the analytics connection read-only', async () => {
    await expect(gateway.runtime.connections.analyticsDb.query(sql.unsafe`CREATE TEMP TABLE analytics_probe (id int)`))
      .rejects.toThrow(/read-only transaction/);
  });
});

describe('probes with core services unreachable', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    await migrateSharedDatabase();
    // Port 1 on the loopback refuses connections at once: Redis and Kafka are "down". (Temporal is
    // left up: its client waits out a 5 s connect timeout, which would only slow the test down.)
    gateway = await startTestGateway({ env: { REDIS_URL: 'redis://127.0.0.1:1/0', KAFKA_BROKERS: '127.0.0.1:1' } });
    // Everything else has connected once Redis is the only thing /ready still waits for.
    await waitFor('every start-up condition but Redis', async () => (await call(`${gateway.baseUrl}/ready`)).body.reason === 'Redis not connected');
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('/live stays 200: a dependency outage is not a process defect', async () => {
    expect(await call(`${gateway.baseUrl}/live`)).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('/ready is 503 not_ready and says what is missing', async () => {
    const { status, body } = await call(`${gateway.baseUrl}/ready`);
    expect(status).toBe(503);
    expect(body).toEqual({ status: 'not_ready', reason: 'Redis not connected' });
  });

  it('/health is 503 unhealthy, naming the unreachable components with null latency', async () => {
    const { status, body } = await call(`${gateway.baseUrl}/health`, { headers: bearer(await adminToken(gateway)) });
    expect(status).toBe(503);
    expect(body.status).toBe('unhealthy');
    const components = body.components as Record<string, { status: string; latencyMs: unknown; error: unknown }>;
    for (const name of ['cache', 'event_broker']) {
      expect({ name, ...components[name] }).toEqual({ name, status: 'unhealthy', latencyMs: null, error: expect.any(String) });
    }
    expect(components.relational_db.status).toBe('healthy');
    expect(components.task_queue.status).toBe('healthy');
  });
});
