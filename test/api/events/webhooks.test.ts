import type { Worker } from '@temporalio/worker';
import { createWebhookActivities } from '../../../activities/events/webhooks.activities';
import { config } from '../../../common/config';
import { newId } from '../../../common/ids';
import { createOrderedProducer, type Producer } from '../../../common/kafka';
import { setGroupOffsets, topicBounds } from '../../../common/kafka-groups';
import { createLogger } from '../../../common/logger';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { TenantReader } from '../../../db/tenant-reads';
import type { GroupConsumer } from '../../../services/events/consumers/group-consumer';
import { createWebhookDispatchers } from '../../../services/events/webhooks/dispatcher';
import { topics, type TopicName } from '../../../services/events/topics';
import { webhookConsumerGroup } from '../../../workflows/events/webhooks.messages';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { testConsumerSettings } from '../../helpers/consumer-groups';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { deadLetterState, seedDeadLetter } from '../../helpers/dead-letters';
import { expectProblem } from '../../helpers/files-api';
import { call, waitFor, type JsonResponse } from '../../helpers/http';
import { bearer, outboxEventsOf, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { ensureCatalogueTopics, publishAuthEvent, testKafka } from '../../helpers/kafka';
import { addMember } from '../../helpers/rbac';
import { connectDevServer, createTestWorker, platformBundle, terminateRunningOn, uniqueTaskQueue, type DevServer } from '../../helpers/temporal';
import { startWebhookReceiver, testWebhookPolicy, type ReceivedWebhook, type WebhookReceiver } from '../../helpers/webhooks';

/**
 * Outbound webhooks (issue 35) through the real gateway, Kafka, PostgreSQL and the Temporal dev
 * server, with a worker of the test's own: its delivery activities, and the webhook dispatchers
 * (services/events/webhooks/dispatcher.ts) on the auth and data topics under group ids of their own,
 * started at the topics' ends. A receiver on 127.0.0.1 checks every request's signature with the
 * standardwebhooks package, as an integrator's would.
 */
jest.setTimeout(120_000);

interface Endpoint {
  id: string;
  url: string;
  eventTypes: string[];
  description: string;
  enabled: boolean;
  secret?: string;
  createdAt: string;
  [member: string]: unknown;
}

interface Page<T> { data: T[]; next_page_token?: string; meta?: { cursor: string | null; hasMore: boolean } }

let gateway: TestGateway;
let owner: DatabasePool;
let app: DatabasePool;
let reads: TenantReader;
let server: DevServer;
let worker: Worker;
let running: Promise<void>;
let producer: Producer;
let dispatchers: Map<string, GroupConsumer>;
let receiver: WebhookReceiver;
let operator: RegisteredAccount;
let stranger: RegisteredAccount;
const secrets = new Set<string>();
const taskQueue = uniqueTaskQueue('webhooks-api');
const DISPATCHED: readonly TopicName[] = [topics.auth.name, topics.data.name];

beforeAll(async () => {
  // The workflow bundle first: webpack fails to load under Jest once the gateway's modules are loaded.
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics(), platformBundle()]);
  [gateway, owner, app, server] = await Promise.all([
    startTestGateway({ env: { EVENTS_TASK_QUEUE: taskQueue }, waitUntilReady: true }),
    createDbPool(ownerUrl(), { name: 'webhooks-api-test', maxPoolSize: 2 }),
    createDbPool(appUrl(), { name: 'webhooks-api-test-app', maxPoolSize: 4 }),
    connectDevServer(),
  ]);
  reads = await TenantReader.open(appUrl(), app, 2);
  // `/fail…` paths answer 500, every other path 204.
  receiver = await startWebhookReceiver({ status: (path) => (path.startsWith('/fail') ? 500 : 204), secrets: () => [...secrets] });
  const logger = createLogger('webhooks-api-test', 'silent');
  worker = await createTestWorker(server, {
    taskQueue, activities: createWebhookActivities({ appPool: app, logger, policy: testWebhookPolicy, consumers: config().consumers }),
  });
  running = worker.run();

  const kafka = testKafka();
  const suffix = newId().slice(-12);
  dispatchers = createWebhookDispatchers({
    kafka, db: app, reads, logger, settings: testConsumerSettings, temporal: server.client,
    taskQueues: { events: taskQueue, notify: uniqueTaskQueue('webhooks-api-notify') },
    topics: DISPATCHED, groupIdOf: (topic) => `test.webhooks-${topic.split('.')[1]}-${suffix}`,
  });
  // From the topics' ends: the shared broker keeps every earlier run's events.
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ids = [...dispatchers.keys()];
    await Promise.all(DISPATCHED.map(async (topic, i) => setGroupOffsets(kafka, ids[i], topic,
      (await topicBounds(admin, topic)).map(({ partition, high }) => ({ partition, offset: high })))));
  } finally {
    await admin.disconnect();
  }
  await Promise.all([...dispatchers.values()].map((dispatcher) => dispatcher.start()));
  producer = createOrderedProducer(kafka);
  await producer.connect();
  [operator, stranger] = await Promise.all([registerAccount(gateway), registerAccount(gateway)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([...(dispatchers?.values() ?? [])].map((dispatcher) => dispatcher.stop()));
  if (server) await terminateRunningOn(server.client, taskQueue);
  worker?.shutdown();
  await running;
  await Promise.all([gateway?.close(), owner?.end(), reads?.end(), server?.close(), producer?.disconnect(), receiver?.close()]);
  await app?.end();
});

function api<T = Endpoint>(path: string, init: { method?: string; body?: unknown; token?: string | null } = {}): Promise<JsonResponse<T>> {
  const token = init.token === undefined ? operator.accessToken : init.token;
  return call<T>(`${gateway.baseUrl}/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { ...(token === null ? {} : bearer(token)), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

async function createEndpoint(path: string, eventTypes: string[], account = operator): Promise<Endpoint> {
  const response = await api('/webhooks/endpoints', { method: 'POST', body: { url: receiver.url(path), eventTypes }, token: account.accessToken });
  expect(response.status).toBe(201);
  secrets.add(response.body.secret!);
  return response.body;
}

/** Waits until `count` requests reached `path`. */
async function received(path: string, count = 1): Promise<ReceivedWebhook[]> {
  await waitFor(`${count} webhook(s) at ${path}`, () => Promise.resolve(receiver.at(path).length >= count), 60_000);
  return receiver.at(path);
}

describe('endpoints', () => {
  it('creates, lists, reads, changes and deletes an endpoint', async () => {
    const created = await api('/webhooks/endpoints', {
      method: 'POST', body: { url: receiver.url('/crud'), eventTypes: ['auth.user.created', 'crm.*'], description: 'CRM sync' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String), url: receiver.url('/crud'), eventTypes: ['auth.user.created', 'crm.*'], description: 'CRM sync', enabled: true,
      disabledReason: null, failingSince: null, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      createdAt: expect.any(String), updatedAt: expect.any(String),
    });
    const { id, secret } = created.body;

    const list = await api<Page<Endpoint>>('/webhooks/endpoints?page_size=100');
    expect(list.status).toBe(200);
    const listed = list.body.data.find((endpoint) => endpoint.id === id);
    expect(listed).toEqual(expect.objectContaining({ id, url: receiver.url('/crud') }));
    expect(listed).not.toHaveProperty('secret');

    expect((await api(`/webhooks/endpoints/${id}`)).body).toEqual(expect.objectContaining({ id, secret }));

    const patched = await api(`/webhooks/endpoints/${id}`, { method: 'PATCH', body: { enabled: false, eventTypes: ['auth.*'], description: '' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual(expect.objectContaining({ id, enabled: false, eventTypes: ['auth.*'], description: '' }));
    expect(patched.body).not.toHaveProperty('secret');

    expect((await api(`/webhooks/endpoints/${id}`, { method: 'DELETE' })).status).toBe(204);
    expectProblem(gateway, await api(`/webhooks/endpoints/${id}`), 404, 'not-found');

    // Each change wrote its audit record to the outbox in its own transaction, through the audit trail the gateway
    // hands the bus (services/events/audit-trail.ts); no record holds the secret.
    const audited = (await outboxEventsOf(owner, operator.tenant.id))
      .filter((event) => event.type === 'audit.record.created' && event.partitionKey === id);
    expect(audited.map((event) => event.data.action)).toEqual([
      'events.webhook_endpoint.created', 'events.webhook_endpoint.updated', 'events.webhook_endpoint.deleted',
    ]);
    expect(audited[1].data).toEqual(expect.objectContaining({
      entityType: 'webhook_endpoint', entityId: id, actorId: operator.user.id,
      before: expect.objectContaining({ enabled: true }), after: expect.objectContaining({ enabled: false }),
    }));
    expect(JSON.stringify(audited)).not.toContain(secret);
  });

  it('pages the list in either envelope', async () => {
    const tenant = await registerAccount(gateway);
    for (const path of ['/p1', '/p2', '/p3']) await createEndpoint(path, ['auth.*'], tenant);
    const first = await api<Page<Endpoint>>('/webhooks/endpoints?page_size=2', { token: tenant.accessToken });
    expect(first.body.data.map((endpoint) => endpoint.url)).toEqual([receiver.url('/p1'), receiver.url('/p2')]);
    const second = await api<Page<Endpoint>>(`/webhooks/endpoints?page_size=2&page_token=${first.body.next_page_token}`, { token: tenant.accessToken });
    expect(second.body).toEqual({ data: [expect.objectContaining({ url: receiver.url('/p3') })] });
    const cursor = await api<Page<Endpoint>>('/webhooks/endpoints?limit=3', { token: tenant.accessToken });
    expect(cursor.body.meta).toEqual({ cursor: null, hasMore: false });
  });

  it.each([
    [{ url: 'https://hooks.example.com/in', eventTypes: [] }],
    [{ url: 'https://hooks.example.com/in', eventTypes: ['Auth.User'] }],
    [{ url: 'https://hooks.example.com/in', eventTypes: ['*'] }],
    [{ url: 'ftp://hooks.example.com/in', eventTypes: ['auth.*'] }],
    [{ eventTypes: ['auth.*'] }],
  ])('refuses a malformed endpoint with 400 validation-error: %j', async (body) => {
    expectProblem(gateway, await api('/webhooks/endpoints', { method: 'POST', body }), 400, 'validation-error');
  });

  it.each([
    'https://10.0.0.7/in', 'https://192.168.1.20/in', 'https://172.20.0.1/in', 'https://100.64.0.9/in', 'https://[fd00::5]/in',
    'http://169.254.169.254/latest/meta-data/', 'https://[fe80::1]/in',
    // Outside development, plain http only to a local receiver.
    'http://hooks.example.com/in',
  ])('refuses %s with 400 webhook-url-not-allowed, at creation and on PATCH', async (url) => {
    expectProblem(gateway, await api('/webhooks/endpoints', { method: 'POST', body: { url, eventTypes: ['auth.*'] } }), 400, 'webhook-url-not-allowed');
    const endpoint = await createEndpoint('/ssrf', ['auth.*']);
    expectProblem(gateway, await api(`/webhooks/endpoints/${endpoint.id}`, { method: 'PATCH', body: { url } }), 400, 'webhook-url-not-allowed');
  });

  it('needs webhooks.manage (owner and admin) and a token', async () => {
    const member = await addMember(gateway, owner, operator.tenant.id, 'member');
    const admin = await addMember(gateway, owner, operator.tenant.id, 'admin');
    expectProblem(gateway, await api('/webhooks/endpoints', { token: member.token }), 403, 'forbidden');
    expect((await api('/webhooks/endpoints', { token: admin.token })).status).toBe(200);
    expectProblem(gateway, await api('/webhooks/endpoints', { token: null }), 401, 'unauthorized');
  });

  it('answers 404 for another tenant\'s endpoint, whatever the route', async () => {
    const endpoint = await createEndpoint('/theirs', ['auth.*'], stranger);
    const id = endpoint.id;
    for (const [method, path, body] of [
      ['GET', `/webhooks/endpoints/${id}`], ['PATCH', `/webhooks/endpoints/${id}`, { enabled: false }], ['DELETE', `/webhooks/endpoints/${id}`],
      ['POST', `/webhooks/endpoints/${id}/rotate-secret`], ['GET', `/webhooks/endpoints/${id}/attempts`], ['POST', `/webhooks/endpoints/${id}/test`],
    ] as const) {
      expectProblem(gateway, await api(path, { method, body }), 404, 'not-found');
    }
    expect((await api(`/webhooks/endpoints/${id}`, { token: stranger.accessToken })).body).toEqual(expect.objectContaining({ id, enabled: true }));
    expect((await api<Page<Endpoint>>('/webhooks/endpoints?page_size=100')).body.data.map((each) => each.id)).not.toContain(id);
  });
});

describe('delivery', () => {
  it('POSTs the tenant\'s matching events signed, and never another tenant\'s', async () => {
    const prefix = await createEndpoint('/users', ['auth.user.*']);
    const exact = await createEndpoint('/roles', ['auth.role.changed']);
    const theirs = await createEndpoint('/stranger', ['auth.*'], stranger);

    const created = await publishAuthEvent(producer, operator.tenant.id, 'auth.user.created');
    const changed = await publishAuthEvent(producer, operator.tenant.id, 'auth.role.changed');
    const strangers = await publishAuthEvent(producer, stranger.tenant.id, 'auth.user.deleted');

    const [user] = await received('/users');
    expect(user.payload).toEqual({ id: created, type: 'auth.user.created', timestamp: expect.any(String), data: expect.objectContaining({ tenant_id: operator.tenant.id }) });
    expect(user.headers['webhook-id']).toBe(created);
    expect(user.verifiedBy).toEqual([prefix.secret]);
    const [role] = await received('/roles');
    expect(role.payload.id).toBe(changed);
    expect(role.verifiedBy).toEqual([exact.secret]);
    const [their] = await received('/stranger');
    expect(their.payload.id).toBe(strangers);
    expect(their.verifiedBy).toEqual([theirs.secret]);

    // The attempts list shows the delivery.
    await waitFor('the attempt settled', async () => (await api<Page<{ status: string }>>(`/webhooks/endpoints/${prefix.id}/attempts`)).body.data[0]?.status === 'succeeded');
    const attempts = await api<Page<Record<string, unknown>>>(`/webhooks/endpoints/${prefix.id}/attempts`);
    expect(attempts.body.data).toEqual([{
      id: expect.any(String), eventId: created, eventType: 'auth.user.created', attempt: 1, status: 'succeeded', responseStatus: 204,
      durationMs: expect.any(Number), error: null, attemptedAt: expect.any(String), nextAttemptAt: null,
    }]);

    // Exactly what each endpoint matches: nothing else arrived by the time the stranger's event was delivered.
    expect(receiver.at('/users').map((entry) => entry.payload.id)).toEqual([created]);
    expect(receiver.at('/roles').map((entry) => entry.payload.id)).toEqual([changed]);
    expect(receiver.at('/stranger').map((entry) => entry.payload.id)).toEqual([strangers]);
  });

  it('signs with the old and the new secret for a day after rotate-secret', async () => {
    const endpoint = await createEndpoint('/rotated', ['auth.user.updated']);
    const rotated = await api(`/webhooks/endpoints/${endpoint.id}/rotate-secret`, { method: 'POST' });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    secrets.add(rotated.body.secret!);

    await publishAuthEvent(producer, operator.tenant.id, 'auth.user.updated');
    const [request] = await received('/rotated');
    expect(request.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Set(request.verifiedBy)).toEqual(new Set([endpoint.secret, rotated.body.secret]));
  });

  it('retries a failing receiver with the same webhook-id, and shows the failed attempt with its next try', async () => {
    const endpoint = await createEndpoint('/failing', ['auth.password.changed']);
    const id = await publishAuthEvent(producer, operator.tenant.id, 'auth.password.changed');
    // The first retry comes 5 s after the first attempt (the whole schedule: test/workflows/webhook-delivery.workflow.test.ts).
    const requests = await received('/failing', 2);
    expect(requests.map((request) => request.headers['webhook-id'])).toEqual([id, id]);
    const attempts = await api<Page<{ attempt: number; status: string; responseStatus: number; nextAttemptAt: string | null }>>(
      `/webhooks/endpoints/${endpoint.id}/attempts`,
    );
    expect(attempts.body.data.find((attempt) => attempt.attempt === 1)).toEqual(expect.objectContaining({
      status: 'failed', responseStatus: 500, nextAttemptAt: expect.any(String),
    }));
  });

  it('delivers a dead letter of the endpoint again when it is retried through the dead-letter tools', async () => {
    const endpoint = await createEndpoint('/redelivered', ['crm.*']);
    const letter = await seedDeadLetter(owner, operator.tenant.id, { consumerGroup: webhookConsumerGroup(endpoint.id), type: 'crm.contact.created' });
    const retried = await api<{ status: string }>(`/integrations/dlq/${letter.id}/retry`, { method: 'POST' });
    expect(retried.status).toBe(200);

    const [request] = await received('/redelivered');
    expect(request.payload).toEqual(expect.objectContaining({ id: letter.eventId, type: 'crm.contact.created' }));
    expect(request.verifiedBy).toEqual([endpoint.secret]);
    await waitFor('the dead letter resolved', async () => (await deadLetterState(owner, letter.id)).status === 'resolved');
  });

  it('sends a webhook.test event now, as a job', async () => {
    const endpoint = await createEndpoint('/tested', ['crm.*']);
    const accepted = await api<{ jobId: string; eventId: string }>(`/webhooks/endpoints/${endpoint.id}/test`, { method: 'POST' });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('location')).toBe(`/v1/jobs/${accepted.body.jobId}`);

    const [request] = await received('/tested');
    expect(request.payload).toEqual({ id: accepted.body.eventId, type: 'webhook.test', timestamp: expect.any(String), data: expect.objectContaining({ endpointId: endpoint.id }) });
    expect(request.verifiedBy).toEqual([endpoint.secret]);

    let job: JsonResponse<{ status: string; result?: unknown }> | undefined;
    await waitFor('the test job completed', async () => {
      job = await api(`/jobs/${accepted.body.jobId}`);
      return job.body.status === 'completed';
    });
    expect(job!.body).toEqual(expect.objectContaining({ kind: 'webhook-test', result: { status: 'delivered', attempts: 1, responseStatus: 204 } }));
    // Another tenant cannot read it.
    expectProblem(gateway, await api(`/jobs/${accepted.body.jobId}`, { token: stranger.accessToken }), 404, 'not-found');
  });
});
