import { randomUUID } from 'node:crypto';
import { status, type Client } from '@grpc/grpc-js';
import { topicPartitionCounts } from '../../../common/kafka';
import { newId } from '../../../common/ids';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { topicNames, topics } from '../../../services/events/topics';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { eventServiceClient as newClient, failure, unary } from '../../helpers/grpc';
import { registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { closedPort, consumeTenantEvents, ensureCatalogueTopics, testKafka } from '../../helpers/kafka';
import { installModule } from '../../helpers/modules';
import { addMember } from '../../helpers/rbac';

/**
 * The gRPC EventService (docs/reference/events.md, package platform.events.v1) through a real @grpc/grpc-js
 * client loading the project's proto, against the test gateway's server, PostgreSQL and Kafka:
 * Publish, BatchPublish, ListTopics and GetTopicSchema with every status docs/reference/events.md#errors gives them
 * (the consumer-group RPCs: grpc-subscribe.test.ts).
 */

let gateway: TestGateway;
let owner: DatabasePool;
let client: Client;
/** A tenant with crm installed. */
let publisher: RegisteredAccount;
/** Another tenant with crm installed. */
let other: RegisteredAccount;

beforeAll(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  [gateway, owner] = await Promise.all([startTestGateway(), createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'events-grpc' })]);
  client = newClient(gateway);
  [publisher, other] = await Promise.all([registerAccount(gateway), registerAccount(gateway)]);
  for (const account of [publisher, other]) expect((await installModule(gateway, account.accessToken, 'crm')).status).toBe(201);
}, 60_000);

afterAll(async () => {
  client?.close();
  await gateway?.close();
  await owner?.end();
});

function rpc<T>(method: string, request: object, token: string | null, extra: Record<string, string> = {}, on: Client = client): Promise<T> {
  return unary<T>(on, method, request, token, extra);
}

type Payload = Record<string, unknown>;
const contact = (data: Payload = {}): Payload & { id: string } => ({ id: newId(), firstName: 'Ada', ...data });

function eventOf<Fields extends Payload>(type: string, data: Payload, fields: Fields = {} as Fields) {
  return { type, data: Buffer.from(JSON.stringify(data)), ...fields };
}

function publishRequest(data: Payload = contact(), fields: Payload = {}, type = 'crm.contact.created') {
  return { topic: topics.data.name, key: String(data.id), event: eventOf(type, data, fields) };
}

describe('Publish', () => {
  it('publishes to the topic under the given key; the envelope carries the token’s tenant, the event’s id, time and the call’s trace', async () => {
    const data = contact({ tenantId: other.tenant.id, tenant_id: other.tenant.id });
    const id = newId();
    const traceId = randomUUID().replaceAll('-', '');
    const occurred = new Date('2026-01-02T03:04:05.678Z');
    const request = publishRequest(data, {
      id, tenant_id: other.tenant.id, source: 'someone-else',
      timestamp: { seconds: String(Math.floor(occurred.getTime() / 1000)), nanos: 678_000_000 },
    });
    const response = await rpc<{ event_id: string }>('Publish', request, publisher.accessToken, { traceparent: `00-${traceId}-${'1'.repeat(16)}-01` });
    expect(response).toEqual({ event_id: id });

    // A later event of the same entity: the key puts it on the same partition, after the first.
    const update = { topic: topics.data.name, key: data.id, event: eventOf('crm.contact.updated', { id: data.id, lastName: 'Byron' }) };
    const { event_id: updateId } = await rpc<{ event_id: string }>('Publish', update, publisher.accessToken);

    const events = await consumeTenantEvents({
      tenantId: publisher.tenant.id, topics: [topics.data.name], until: (seen) => seen.some((e) => e.envelope.id === updateId),
    });
    const received = events.find((e) => e.envelope.id === id)!;
    const updated = events.find((e) => e.envelope.id === updateId)!;
    expect({ key: received.key, partition: updated.partition, later: updated.offset > received.offset })
      .toEqual({ key: data.id, partition: received.partition, later: true });
    expect(received.envelope).toEqual({
      id, type: 'crm.contact.created', source: 'crm', tenantId: publisher.tenant.id,
      // docs/reference/events.md#rule-3: the tenant is the token's, in the envelope and in the payload.
      data: { ...data, tenantId: publisher.tenant.id, tenant_id: publisher.tenant.id },
      schemaVersion: '1.0.0', timestamp: occurred.toISOString(), traceId,
    });
    expect(received.headers).toEqual(expect.objectContaining({ id, tenantId: publisher.tenant.id, type: 'crm.contact.created', traceId }));
  });

  it('gives the event a new UUID v7 when it names no id', async () => {
    const { event_id } = await rpc<{ event_id: string }>('Publish', publishRequest(), publisher.accessToken);
    expect(event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('is UNAUTHENTICATED without a bearer token or with an invalid one', async () => {
    expect(await failure(rpc('Publish', publishRequest(), null))).toMatchObject({ code: status.UNAUTHENTICATED, problem: 'unauthorized' });
    expect(await failure(rpc('Publish', publishRequest(), 'a.b.c'))).toMatchObject({ code: status.UNAUTHENTICATED });
    const forged = `${publisher.accessToken.slice(0, -4)}AAAA`;
    expect(await failure(rpc('Publish', publishRequest(), forged))).toMatchObject({ code: status.UNAUTHENTICATED });
  });

  it('is NOT_FOUND for a topic that does not exist', async () => {
    const outcome = await failure(rpc('Publish', { ...publishRequest(), topic: 'platform.nothing.events' }, publisher.accessToken));
    expect(outcome).toEqual({ code: status.NOT_FOUND, details: 'The topic platform.nothing.events was not found', problem: 'not-found' });
  });

  it('is PERMISSION_DENIED without events.publish, for a kernel type, an undeclared type, a module not installed and another topic', async () => {
    const member = await addMember(gateway, owner, publisher.tenant.id);
    expect(await failure(rpc('Publish', publishRequest(), member.token)))
      .toEqual({ code: status.PERMISSION_DENIED, details: 'The permission events.publish is required', problem: 'forbidden' });

    const kernel = { topic: topics.auth.name, key: newId(), event: eventOf('auth.user.created', { user_id: newId() }) };
    expect(await failure(rpc('Publish', kernel, publisher.accessToken))).toEqual({
      code: status.PERMISSION_DENIED, problem: 'event-topic-protected',
      details: 'Module auth may not publish auth.user.created: the namespace belongs to the identity service',
    });
    expect(await failure(rpc('Publish', publishRequest(contact(), {}, 'crm.contact.deleted'), publisher.accessToken)))
      .toMatchObject({ code: status.PERMISSION_DENIED, problem: 'event-not-declared' });
    const bare = await registerAccount(gateway);
    expect(await failure(rpc('Publish', publishRequest(), bare.accessToken)))
      .toMatchObject({ code: status.PERMISSION_DENIED, problem: 'event-not-declared', details: expect.stringContaining('not installed') });
    expect(await failure(rpc('Publish', { ...publishRequest(), topic: topics.money.name }, publisher.accessToken))).toEqual({
      code: status.PERMISSION_DENIED, problem: 'forbidden',
      details: 'Module crm may not publish to platform.money.events: crm.contact.created belongs on platform.data.events',
    });
  });

  it.each([
    ['a payload that does not match the schema', publishRequest({ id: 'not-a-uuid', age: 'old' }), 'validation-error', 'data.firstName REQUIRED'],
    ['a malformed type', publishRequest(contact(), {}, 'crm'), 'validation-error', 'event.type INVALID_EVENT_TYPE'],
    ['a malformed schema version', publishRequest(contact(), { schema_version: '1.0' }), 'invalid-schema-version', 'not a semantic version'],
    ['a schema version newer than the registered one', publishRequest(contact(), { schema_version: '1.1.0' }), 'validation-error', 'schemaVersion UNKNOWN_SCHEMA_VERSION: crm.contact.created has no schema version 1.1.0; the current one is 1.0.0'],
    ['data that is not the JSON of an object', { ...publishRequest(), event: { type: 'crm.contact.created', data: Buffer.from('[1]') } }, 'validation-error', 'event.data INVALID_TYPE'],
    ['no key', { ...publishRequest(), key: '' }, 'validation-error', 'key REQUIRED'],
    ['no event', { topic: topics.data.name, key: newId() }, 'validation-error', 'event REQUIRED'],
    ['an event id that is no UUID', publishRequest(contact(), { id: '42' }), 'validation-error', 'event.id INVALID_FORMAT'],
  ])('is INVALID_ARGUMENT for %s', async (_case, request, problem, detail) => {
    const outcome = await failure(rpc('Publish', request, publisher.accessToken));
    expect(outcome).toMatchObject({ code: status.INVALID_ARGUMENT, problem });
    expect(outcome.details).toContain(detail);
  });

  it('is INVALID_ARGUMENT for a payload over 1 MB, and publishes 1 MB exactly', async () => {
    const base = contact();
    const overhead = Buffer.byteLength(JSON.stringify({ ...base, note: '' }));
    const at = (bytes: number) => publishRequest({ ...base, note: 'x'.repeat(bytes - overhead) });
    expect(await failure(rpc('Publish', at(1024 * 1024 + 1), publisher.accessToken)))
      .toMatchObject({ code: status.INVALID_ARGUMENT, problem: 'event-payload-too-large' });
    expect(await rpc('Publish', at(1024 * 1024), publisher.accessToken)).toEqual({ event_id: expect.any(String) });
  });
});

describe('BatchPublish', () => {
  it('publishes every item in one producer batch, each under its key', async () => {
    const items = Array.from({ length: 3 }, () => {
      const data = contact();
      return { key: data.id, event: eventOf('crm.contact.created', data, { id: newId() }) };
    });
    const sendBatch = jest.spyOn(gateway.runtime.events.producer, 'sendBatch');
    try {
      expect(await rpc('BatchPublish', { topic: topics.data.name, items }, publisher.accessToken)).toEqual({ published_count: 3 });
      expect(sendBatch).toHaveBeenCalledTimes(1);
      expect(sendBatch.mock.calls[0][0]).toHaveLength(3);
    } finally {
      sendBatch.mockRestore();
    }
    const ids = items.map((item) => item.event.id);
    const events = await consumeTenantEvents({
      tenantId: publisher.tenant.id, topics: [topics.data.name], until: (seen) => ids.every((id) => seen.some((e) => e.envelope.id === id)),
    });
    const received = ids.map((id) => events.find((e) => e.envelope.id === id)!);
    expect(received.map((e) => e.key)).toEqual(items.map((item) => item.key));
    expect(received.map((e) => e.envelope.tenantId)).toEqual(items.map(() => publisher.tenant.id));
  });

  it('keeps the order of one key’s items on its partition', async () => {
    const key = newId();
    const items = ['Ada', 'Grace', 'Edsger'].map((firstName) => ({ key, event: eventOf('crm.contact.updated', { id: key, firstName }, { id: newId() }) }));
    expect(await rpc('BatchPublish', { topic: topics.data.name, items }, publisher.accessToken)).toEqual({ published_count: 3 });
    const ids = items.map((item) => item.event.id);
    const events = await consumeTenantEvents({
      tenantId: publisher.tenant.id, topics: [topics.data.name], until: (seen) => ids.every((id) => seen.some((e) => e.envelope.id === id)),
    });
    const received = events.filter((e) => ids.includes(e.envelope.id));
    expect(received.map((e) => e.envelope.id)).toEqual(ids);
    expect(new Set(received.map((e) => e.partition)).size).toBe(1);
  });

  it('is INVALID_ARGUMENT for more than 500 items or none, and for one bad item, publishing nothing', async () => {
    const item = () => {
      const data = contact();
      return { key: data.id, event: eventOf('crm.contact.created', data) };
    };
    expect(await failure(rpc('BatchPublish', { topic: topics.data.name, items: Array.from({ length: 501 }, item) }, publisher.accessToken)))
      .toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining('at most 500') });
    expect(await failure(rpc('BatchPublish', { topic: topics.data.name, items: [] }, publisher.accessToken)))
      .toMatchObject({ code: status.INVALID_ARGUMENT });

    const good = { key: newId(), event: eventOf('crm.contact.created', contact(), { id: newId() }) };
    const bad = { key: newId(), event: eventOf('crm.contact.created', { id: newId() }) };
    const outcome = await failure(rpc('BatchPublish', { topic: topics.data.name, items: [good, bad] }, publisher.accessToken));
    expect(outcome).toMatchObject({ code: status.INVALID_ARGUMENT, problem: 'validation-error' });
    expect(outcome.details).toContain('items[1].data.firstName REQUIRED');

    // A later event on the good item's key (same partition) marks where reading may stop: the good item is not before it.
    const marker = await rpc<{ event_id: string }>('Publish', { topic: topics.data.name, key: good.key, event: eventOf('crm.contact.created', contact()) }, publisher.accessToken);
    const events = await consumeTenantEvents({
      tenantId: publisher.tenant.id, topics: [topics.data.name], until: (seen) => seen.some((e) => e.envelope.id === marker.event_id),
    });
    expect(events.some((e) => e.envelope.id === good.event.id)).toBe(false);
  });

  it('checks a type’s rules once per batch and every item’s own size and payload, refusing the first bad item by its index', async () => {
    const created = () => ({ key: newId(), event: eventOf('crm.contact.created', contact()) });
    const updated = () => {
      const id = newId();
      return { key: id, event: eventOf('crm.contact.updated', { id, firstName: 'Ada' }) };
    };
    const refusal = async (items: unknown[]) => failure(rpc('BatchPublish', { topic: topics.data.name, items }, publisher.accessToken));

    const isActive = jest.spyOn(gateway.runtime.events.installed, 'isActive');
    try {
      const items = [created(), updated(), created(), updated(), created()];
      expect(await rpc('BatchPublish', { topic: topics.data.name, items }, publisher.accessToken)).toEqual({ published_count: 5 });
      expect(isActive.mock.calls).toEqual([[publisher.tenant.id, 'crm'], [publisher.tenant.id, 'crm']]);
    } finally {
      isActive.mockRestore();
    }

    const undeclared = { key: newId(), event: eventOf('crm.contact.merged', { id: newId() }) };
    expect(await refusal([created(), updated(), created(), undeclared, created()]))
      .toMatchObject({ code: status.PERMISSION_DENIED, problem: 'event-not-declared', details: expect.stringMatching(/^items\[3\]: /) });
    const newerVersion = { key: newId(), event: eventOf('crm.contact.created', contact(), { schema_version: '1.9.0' }) };
    expect(await refusal([created(), created(), newerVersion]))
      .toMatchObject({ code: status.INVALID_ARGUMENT, problem: 'validation-error', details: expect.stringMatching(/^items\[2\]: .*schemaVersion UNKNOWN_SCHEMA_VERSION/) });
    const tooLarge = { key: newId(), event: eventOf('crm.contact.created', { ...contact(), notes: 'x'.repeat(1024 * 1024) }) };
    expect(await refusal([created(), tooLarge]))
      .toMatchObject({ code: status.INVALID_ARGUMENT, problem: 'event-payload-too-large', details: expect.stringMatching(/^items\[1\]: /) });
    const mistyped = { key: newId(), event: eventOf('crm.contact.updated', { id: newId(), age: 'forty' }) };
    expect(await refusal([updated(), created(), mistyped]))
      .toMatchObject({ code: status.INVALID_ARGUMENT, problem: 'validation-error', details: expect.stringContaining('items[2].data.age INVALID_TYPE') });
  });

  it('stamps the items without their own time with the batch’s publish time', async () => {
    const occurred = new Date('2026-01-02T03:04:05.678Z');
    const items = [contact(), contact(), contact()].map((data, index) => ({
      key: data.id, event: eventOf('crm.contact.created', data, { id: newId(), ...(index === 1 ? { timestamp: { seconds: String(Math.floor(occurred.getTime() / 1000)), nanos: 678_000_000 } } : {}) }),
    }));
    const before = Date.now();
    expect(await rpc('BatchPublish', { topic: topics.data.name, items }, publisher.accessToken)).toEqual({ published_count: 3 });
    const ids = items.map((item) => item.event.id);
    const events = await consumeTenantEvents({
      tenantId: publisher.tenant.id, topics: [topics.data.name], until: (seen) => ids.every((id) => seen.some((e) => e.envelope.id === id)),
    });
    const [first, second, third] = ids.map((id) => events.find((e) => e.envelope.id === id)!.envelope.timestamp);
    expect(second).toBe(occurred.toISOString());
    expect(third).toBe(first);
    expect(Date.parse(first)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('is 500 items at most: 500 are published', async () => {
    const items = Array.from({ length: 500 }, () => {
      const data = contact();
      return { key: data.id, event: eventOf('crm.contact.created', data) };
    });
    expect(await rpc('BatchPublish', { topic: topics.data.name, items }, publisher.accessToken)).toEqual({ published_count: 500 });
  });

  it('is UNAUTHENTICATED, NOT_FOUND and PERMISSION_DENIED like Publish', async () => {
    const items = [{ key: newId(), event: eventOf('crm.contact.created', contact()) }];
    expect(await failure(rpc('BatchPublish', { topic: topics.data.name, items }, null))).toMatchObject({ code: status.UNAUTHENTICATED });
    expect(await failure(rpc('BatchPublish', { topic: 'platform.nothing.events', items }, publisher.accessToken))).toMatchObject({ code: status.NOT_FOUND });
    const kernel = [{ key: newId(), event: eventOf('money.wallet.credited', { wallet_id: newId() }) }];
    expect(await failure(rpc('BatchPublish', { topic: topics.money.name, items: kernel }, publisher.accessToken)))
      .toMatchObject({ code: status.PERMISSION_DENIED, problem: 'event-topic-protected', details: expect.stringMatching(/^items\[0\]: /) });
  });
});

describe('ListTopics and GetTopicSchema', () => {
  it('lists the eight topics with the partition counts Kafka reports', async () => {
    const admin = testKafka().admin();
    await admin.connect();
    const counts = await topicPartitionCounts(admin, topicNames).finally(() => admin.disconnect());
    const { topics: listed } = await rpc<{ topics: Array<{ name: string; partition_count: number }> }>('ListTopics', {}, publisher.accessToken);
    expect(listed).toEqual(topicNames.map((name) => ({ name, partition_count: counts.get(name) })));
    expect(listed).toHaveLength(8);
    expect(await failure(rpc('ListTopics', {}, null))).toMatchObject({ code: status.UNAUTHENTICATED });
  });

  it('gives an event type’s schema text and current version, and a topic’s types with the newest version', async () => {
    const type = await rpc<{ topic: string; schema: string; schema_version: string }>('GetTopicSchema', { topic: 'crm.contact.created' }, publisher.accessToken);
    expect(type).toMatchObject({ topic: 'crm.contact.created', schema_version: '1.0.0' });
    expect(JSON.parse(type.schema)).toMatchObject({ type: 'object', required: ['id', 'firstName'] });

    const topic = await rpc<{ topic: string; schema: string; schema_version: string }>('GetTopicSchema', { topic: topics.auth.name }, publisher.accessToken);
    const members = JSON.parse(topic.schema) as Record<string, { schemaVersion: string; schema: unknown }>;
    expect(members['auth.user.created']).toEqual({ schemaVersion: '1.0.0', schema: expect.objectContaining({ type: 'object' }) });
    expect(Object.keys(members).every((name) => name.startsWith('auth.'))).toBe(true);
    expect(topic.schema_version).toMatch(/^\d+\.\d+\.\d+$/);

    for (const unknown of ['platform.nothing.events', 'crm.contact.deleted']) {
      expect(await failure(rpc('GetTopicSchema', { topic: unknown }, publisher.accessToken))).toMatchObject({ code: status.NOT_FOUND });
    }
    expect(await failure(rpc('GetTopicSchema', { topic: '' }, publisher.accessToken))).toMatchObject({ code: status.INVALID_ARGUMENT });
    expect(await failure(rpc('GetTopicSchema', { topic: topics.auth.name }, null))).toMatchObject({ code: status.UNAUTHENTICATED });
  });
});

describe('tenants', () => {
  it('a second tenant’s events carry its own tenant, whatever they claim, and never reach the first tenant', async () => {
    const data = contact({ tenant_id: publisher.tenant.id });
    const theirs = await rpc<{ event_id: string }>('Publish', publishRequest(data, { tenant_id: publisher.tenant.id }), other.accessToken);
    const ours = await rpc<{ event_id: string }>('Publish', publishRequest(), publisher.accessToken);

    const [mine, seenByOther] = await Promise.all([
      consumeTenantEvents({ tenantId: publisher.tenant.id, topics: [topics.data.name], until: (seen) => seen.some((e) => e.envelope.id === ours.event_id) }),
      consumeTenantEvents({ tenantId: other.tenant.id, topics: [topics.data.name], until: (seen) => seen.some((e) => e.envelope.id === theirs.event_id) }),
    ]);
    expect(mine.some((e) => e.envelope.id === theirs.event_id)).toBe(false);
    expect(seenByOther.find((e) => e.envelope.id === theirs.event_id)!.envelope).toMatchObject({
      tenantId: other.tenant.id, data: { tenant_id: other.tenant.id },
    });
    expect(seenByOther.some((e) => e.envelope.id === ours.event_id)).toBe(false);
  });
});

describe('request audit', () => {
  it('hands audit.api.called for every authenticated call to the gateway’s request auditor, with the status', async () => {
    const record = jest.spyOn(gateway.runtime.gateway.requestAudit, 'record');
    try {
      const traceId = 'ab'.repeat(16);
      await rpc('Publish', publishRequest(), publisher.accessToken, { traceparent: `00-${traceId}-${'2'.repeat(16)}-01` });
      await failure(rpc('Publish', { ...publishRequest(), topic: 'platform.nothing.events' }, publisher.accessToken));
      await failure(rpc('ListTopics', {}, null));
      expect(record.mock.calls.map(([draft]) => draft)).toEqual([
        expect.objectContaining({
          tenantId: publisher.tenant.id, action: 'audit.api.called', actorId: publisher.user.id, traceId,
          entityType: 'route', entityId: 'gRPC /platform.events.v1.EventService/Publish',
          meta: expect.objectContaining({ grpcStatus: 'OK', latencyMs: expect.any(Number) }),
        }),
        expect.objectContaining({ meta: expect.objectContaining({ grpcStatus: 'NOT_FOUND' }) }),
      ]);
    } finally {
      record.mockRestore();
    }
  });
});

describe('/health', () => {
  it('reports the EventService with the event broker: healthy while it answers', async () => {
    const health = await gateway.runtime.probes.health();
    expect(health.components.event_broker).toEqual({ status: 'healthy', latencyMs: expect.any(Number), error: null });
  });
});

describe('a broker that is down', () => {
  it('Publish and BatchPublish are UNAVAILABLE at once; ListTopics is UNAVAILABLE', async () => {
    // A publish timeout far above the bound: answering within it shows the refused connection failed
    // the call at once, not the timeout, however slow the machine.
    const down = await startTestGateway({ env: { KAFKA_BROKERS: `127.0.0.1:${await closedPort()}`, EVENTS_PUBLISH_TIMEOUT_MS: '20000' } });
    const downClient = newClient(down);
    try {
      const started = Date.now();
      expect(await failure(rpc('Publish', publishRequest(), publisher.accessToken, {}, downClient)))
        .toMatchObject({ code: status.UNAVAILABLE, problem: 'events-broker-unavailable' });
      expect(Date.now() - started).toBeLessThan(10_000);
      const items = [{ key: newId(), event: eventOf('crm.contact.created', contact()) }];
      expect(await failure(rpc('BatchPublish', { topic: topics.data.name, items }, publisher.accessToken, {}, downClient)))
        .toMatchObject({ code: status.UNAVAILABLE });
      expect(await failure(rpc('ListTopics', {}, publisher.accessToken, {}, downClient))).toMatchObject({ code: status.UNAVAILABLE });
    } finally {
      downClient.close();
      await down.close();
    }
  }, 60_000);

});

describe('/health without the EventService', () => {
  it('reports the event broker degraded, naming the service', async () => {
    gateway.runtime.eventService.listening(null);
    try {
      const health = await gateway.runtime.probes.health();
      expect(health.components.event_broker).toMatchObject({ status: 'degraded', error: 'the EventService (gRPC) is not listening' });
    } finally {
      gateway.runtime.eventService.listening(gateway.grpcAddress);
    }
  });
});
