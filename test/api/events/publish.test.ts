import { randomUUID } from 'node:crypto';
import { newId } from '../../../common/ids';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { topics } from '../../../services/events/topics';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { expectProblem } from '../../helpers/files-api';
import { call, type JsonResponse } from '../../helpers/http';
import { bearer, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { closedPort, consumeTenantEvents, ensureCatalogueTopics } from '../../helpers/kafka';
import { installModule } from '../../helpers/modules';
import { addMember } from '../../helpers/rbac';

/**
 * POST /v1/events/publish (docs/reference/events.md#rule-11) through the real gateway, PostgreSQL and
 * Kafka: what reaches the broker, the idempotent replay, and every refusal.
 */

interface Published {
  eventId: string;
  type: string;
  topic: string;
  partition: number;
  offset: number;
}

let gateway: TestGateway;
let owner: DatabasePool;
/** A tenant with crm installed. */
let publisher: RegisteredAccount;
/** Another tenant with crm installed, whose id `publisher` writes into its payloads. */
let other: RegisteredAccount;

beforeAll(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  [gateway, owner] = await Promise.all([
    startTestGateway(), createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'events-publish' }),
  ]);
  [publisher, other] = await Promise.all([registerAccount(gateway), registerAccount(gateway)]);
  for (const account of [publisher, other]) expect((await installModule(gateway, account.accessToken, 'crm')).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

function publish<T = Published>(
  target: TestGateway, token: string, body: unknown, headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  return call<T>(`${target.baseUrl}/v1/events/publish`, {
    method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  });
}

const contactCreated = (data: Record<string, unknown> = {}) => ({
  type: 'crm.contact.created', data: { id: newId(), firstName: 'Ada', ...data },
});

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('publishing an event', () => {
  it('answers 201 with where Kafka stored it; the envelope carries the token’s tenant and the request’s trace', async () => {
    const traceId = randomUUID().replaceAll('-', '');
    const body = contactCreated({ tenantId: other.tenant.id, tenant_id: other.tenant.id });
    const response = await publish(gateway, publisher.accessToken, body, {
      'Idempotency-Key': randomUUID(), traceparent: `00-${traceId}-${'1'.repeat(16)}-01`,
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      eventId: expect.stringMatching(UUID_V7), type: 'crm.contact.created', topic: topics.data.name,
      partition: expect.any(Number), offset: expect.any(Number),
    });

    const [received] = await consumeTenantEvents({
      tenantId: publisher.tenant.id, topics: [topics.data.name], until: (events) => events.some((e) => e.envelope.id === response.body.eventId),
    }).then((events) => events.filter((e) => e.envelope.id === response.body.eventId));
    expect({ partition: received.partition, offset: received.offset, key: received.key }).toEqual({
      partition: response.body.partition, offset: response.body.offset, key: body.data.id,
    });
    expect(received.envelope).toEqual({
      id: response.body.eventId, type: 'crm.contact.created', source: 'crm', tenantId: publisher.tenant.id,
      // docs/reference/events.md#rule-3: the tenant in the payload is overwritten too.
      data: { ...body.data, tenantId: publisher.tenant.id, tenant_id: publisher.tenant.id },
      schemaVersion: '1.0.0', timestamp: expect.any(String), traceId,
    });
    expect(received.headers).toEqual(expect.objectContaining({ tenantId: publisher.tenant.id, type: 'crm.contact.created' }));
  });

  it('answers the same Idempotency-Key and body with 200 and the original answer, publishing once; another body is 409', async () => {
    const key = randomUUID();
    const body = contactCreated();
    const first = await publish(gateway, publisher.accessToken, body, { 'Idempotency-Key': key });
    const again = await publish(gateway, publisher.accessToken, body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: first.body });
    expectProblem(gateway, await publish(gateway, publisher.accessToken, contactCreated(), { 'Idempotency-Key': key }), 409, 'idempotency-conflict');
    // Keys are the tenant's: another tenant's request under the same key is its own.
    expect((await publish(gateway, other.accessToken, body, { 'Idempotency-Key': key })).status).toBe(201);

    // A later event of the tenant on the same entity (same partition) marks where reading may stop.
    const marker = await publish(gateway, publisher.accessToken, { type: 'crm.contact.updated', data: { id: body.data.id, lastName: 'Byron' } });
    expect(marker.status).toBe(201);
    const events = await consumeTenantEvents({
      tenantId: publisher.tenant.id, topics: [topics.data.name], until: (seen) => seen.some((e) => e.envelope.id === marker.body.eventId),
    });
    expect(events.filter((e) => e.envelope.data.id === body.data.id).map((e) => e.envelope.id)).toEqual([first.body.eventId, marker.body.eventId]);
  });

  it('publishes a payload of the type’s schema in an older version of the same major, and without an Idempotency-Key', async () => {
    expect((await publish(gateway, publisher.accessToken, { ...contactCreated(), schemaVersion: '1.0.0' })).status).toBe(201);
  });
});

describe('refusals', () => {
  it.each([
    ['auth.user.created', 'auth', 'identity'],
    ['money.wallet.credited', 'money', 'money'],
    ['billing.plan.changed', 'billing', 'billing'],
    ['audit.record.created', 'audit', 'audit'],
    ['module.registry.installed', 'module', 'module registry'],
  ])('a kernel type (%s) is 403 event-topic-protected naming module and event, with a code', async (type, module, service) => {
    const response = await publish(gateway, publisher.accessToken, { type, data: { user_id: newId() } });
    const problem = expectProblem(gateway, response, 403, 'event-topic-protected');
    expect(problem).toEqual(expect.objectContaining({
      code: 'KERNEL_EVENT_PUBLISH_FORBIDDEN', module, event: type,
      detail: `Module ${module} may not publish ${type}: the namespace belongs to the ${service} service`,
    }));
  });

  it('a type the module does not declare, an unknown module and a module not installed are 403 event-not-declared', async () => {
    const bare = await registerAccount(gateway);
    const cases: Array<[string, string, string]> = [
      [publisher.accessToken, 'crm.contact.deleted', 'its manifest does not declare it in events.publishes'],
      [publisher.accessToken, 'shop.order.created', 'there is no module shop'],
      [bare.accessToken, 'crm.contact.created', 'the module is not installed and active for this tenant'],
    ];
    for (const [token, type, why] of cases) {
      const problem = expectProblem(gateway, await publish(gateway, token, { type, data: { id: newId(), firstName: 'Ada' } }), 403, 'event-not-declared');
      expect(problem).toEqual(expect.objectContaining({ code: 'EVENT_PUBLISH_FORBIDDEN', detail: `Module ${type.split('.')[0]} may not publish ${type}: ${why}` }));
    }
  });

  it('a payload over 1 MB is 400 event-payload-too-large (EVENT_PAYLOAD_TOO_LARGE); 1 MB exactly is published', async () => {
    const base = contactCreated();
    const overhead = Buffer.byteLength(JSON.stringify({ ...base.data, note: '' }));
    const at = (bytes: number) => ({ ...base, data: { ...base.data, note: 'x'.repeat(bytes - overhead) } });
    const problem = expectProblem(gateway, await publish(gateway, publisher.accessToken, at(1024 * 1024 + 1)), 400, 'event-payload-too-large');
    expect(problem).toEqual(expect.objectContaining({ code: 'EVENT_PAYLOAD_TOO_LARGE', limitBytes: 1024 * 1024 }));
    expect((await publish(gateway, publisher.accessToken, at(1024 * 1024))).status).toBe(201);
  });

  it.each([
    ['1.0', 'schemaVersion must be a semantic version such as 1.0.0'],
    ['v1.0.0', 'schemaVersion must be a semantic version such as 1.0.0'],
  ])('a malformed schemaVersion %s is 400 invalid-schema-version (INVALID_SCHEMA_VERSION)', async (schemaVersion, detail) => {
    const problem = expectProblem(gateway, await publish(gateway, publisher.accessToken, { ...contactCreated(), schemaVersion }), 400, 'invalid-schema-version');
    expect(problem.code).toBe('INVALID_SCHEMA_VERSION');
    expect(problem.detail).toContain(detail);
  });

  it.each([
    ['2.0.0', 'crm.contact.created has no schema version 2.0.0; the current one is 1.0.0'],
    ['1.1.0', 'crm.contact.created has no schema version 1.1.0; the current one is 1.0.0'],
  ])('a well-formed schemaVersion %s that is not registered is 400 validation-error (UNKNOWN_SCHEMA_VERSION)', async (schemaVersion, message) => {
    const problem = expectProblem(gateway, await publish(gateway, publisher.accessToken, { ...contactCreated(), schemaVersion }), 400, 'validation-error');
    expect(problem.errors).toEqual([{ field: 'schemaVersion', code: 'UNKNOWN_SCHEMA_VERSION', message }]);
  });

  it('a payload that does not match the registered schema is 400 validation-error naming each field', async () => {
    const response = await publish(gateway, publisher.accessToken, { type: 'crm.contact.created', data: { id: 'not-a-uuid', age: 'old' } });
    const problem = expectProblem(gateway, response, 400, 'validation-error');
    expect(problem.errors).toEqual(expect.arrayContaining([
      expect.objectContaining({ field: 'data.id', code: 'INVALID_FORMAT' }),
      expect.objectContaining({ field: 'data.firstName', code: 'REQUIRED' }),
      expect.objectContaining({ field: 'data.age', code: 'INVALID_TYPE' }),
    ]));
  });

  it('without events.publish is 403 forbidden; without a token 401', async () => {
    const member = await addMember(gateway, owner, publisher.tenant.id);
    expectProblem(gateway, await publish(gateway, member.token, contactCreated()), 403, 'forbidden');
    const anonymous = await call(`${gateway.baseUrl}/v1/events/publish`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(contactCreated()),
    });
    expectProblem(gateway, anonymous, 401, 'unauthorized');
  });
});

describe('a broker that is down', () => {
  it('is 503 events-broker-unavailable at once, with nothing stored under the key', async () => {
    // A gateway of this test whose producer (like its other Kafka clients) points at no broker; the shared one stays up.
    // A publish timeout far above the bound: answering within it shows the refused connection failed
    // the call at once, not the timeout, however slow the machine.
    const down = await startTestGateway({ env: { KAFKA_BROKERS: `127.0.0.1:${await closedPort()}`, EVENTS_PUBLISH_TIMEOUT_MS: '20000' } });
    try {
      const key = randomUUID();
      const body = contactCreated();
      const started = Date.now();
      const response = await publish(down, publisher.accessToken, body, { 'Idempotency-Key': key });
      const elapsedMs = Date.now() - started;
      const problem = expectProblem(down, response, 503, 'events-broker-unavailable');
      expect(problem.code).toBe('events.broker.unavailable');
      expect(elapsedMs).toBeLessThan(10_000);
      // Nothing half-written: the key holds no answer, so the retry against a live broker publishes.
      expect((await publish(gateway, publisher.accessToken, body, { 'Idempotency-Key': key })).status).toBe(201);
    } finally {
      await down.close();
    }
  }, 30_000);
});
