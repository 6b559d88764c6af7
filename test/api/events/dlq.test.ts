import { credentials, Metadata, status, type Client, type ServiceError } from '@grpc/grpc-js';
import type { Worker } from '@temporalio/worker';
import { createDeadLetterActivities } from '../../../activities/events/dead-letters.activities';
import { newId } from '../../../common/ids';
import { ReconnectingProducer } from '../../../common/kafka';
import { unaryCall } from '../../../common/proto';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import type { DeadLetterRow } from '../../../db/queries/events/dead-letters.queries';
import { eventServiceClass } from '../../../services/events/event-service';
import { topics } from '../../../services/events/topics';
import { deadLetterReplayWorkflowId } from '../../../workflows/events/dead-letters.messages';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { deadLetterState, seedDeadLetter, type SeedOptions } from '../../helpers/dead-letters';
import { expectProblem } from '../../helpers/files-api';
import { call, waitFor, type JsonResponse } from '../../helpers/http';
import { bearer, outboxEventsOf, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { closedPort, consumeTenantEvents, ensureCatalogueTopics, testKafka } from '../../helpers/kafka';
import { addMember } from '../../helpers/rbac';
import { connectDevServer, createTestWorker, platformBundle, uniqueTaskQueue, type DevServer } from '../../helpers/temporal';

/**
 * Operating dead letters (docs/reference/events.md, rules 17 to 19: DLQRecord, DLQRetry, DLQReplayAll; REST GET /integrations/dlq
 * and POST /integrations/dlq/:id/retry, beside GET /integrations/dlq/:id and POST
 * /integrations/dlq/replay) through the real gateway, its gRPC EventService, PostgreSQL, Kafka and
 * the Temporal dev server. Dead letters are seeded as a consumer group writes them (upsertDeadLetter).
 */

interface DeadLetterView {
  id: string;
  original_event: Record<string, unknown>;
  status: string;
  consumer_group: string;
  [member: string]: unknown;
}

interface Page {
  data: DeadLetterView[];
  next_page_token?: string;
  meta?: { cursor: string | null; hasMore: boolean };
}

interface JobView { jobId: string; kind: string; status: string; result?: { replayed: number; skippedAlreadyResolved: number } }

let gateway: TestGateway;
let owner: DatabasePool;
let app: DatabasePool;
let server: DevServer;
let worker: Worker;
let running: Promise<void> | undefined;
let client: Client;
let producer: ReconnectingProducer;
let operator: RegisteredAccount;
let stranger: RegisteredAccount;
const taskQueue = uniqueTaskQueue('events-dlq-api');

beforeAll(async () => {
  // The workflow bundle first: webpack fails to load under Jest once the gateway's modules are loaded.
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics(), platformBundle()]);
  [gateway, owner, app, server] = await Promise.all([
    startTestGateway({ env: { EVENTS_TASK_QUEUE: taskQueue }, waitUntilReady: true }),
    createDbPool(ownerUrl(), { name: 'events-dlq-test', maxPoolSize: 2 }),
    createDbPool(appUrl(), { name: 'events-dlq-test-app', maxPoolSize: 2 }),
    connectDevServer(),
  ]);
  // Built now, run only once the replay-all test has seen a replay wait for it.
  producer = new ReconnectingProducer(testKafka());
  worker = await createTestWorker(server, { taskQueue, activities: createDeadLetterActivities({ appPool: app, producer }) });
  client = new (eventServiceClass())(gateway.grpcAddress, credentials.createInsecure());
  [operator, stranger] = await Promise.all([registerAccount(gateway), registerAccount(gateway)]);
}, 120_000);

afterAll(async () => {
  client?.close();
  worker?.shutdown();
  await running;
  await Promise.all([gateway?.close(), owner?.end(), app?.end(), server?.close(), producer?.reset()]);
});

/** The replay worker polls from the first call on. */
function runWorker(): void {
  running ??= worker.run();
}

const seed = (options: SeedOptions = {}, account = operator): Promise<DeadLetterRow> => seedDeadLetter(owner, account.tenant.id, options);

function read<T>(target: TestGateway, path: string, token = operator.accessToken): Promise<JsonResponse<T>> {
  return call<T>(`${target.baseUrl}/v1${path}`, { headers: bearer(token) });
}

function retry<T = DeadLetterView>(target: TestGateway, id: string, token = operator.accessToken): Promise<JsonResponse<T>> {
  return call<T>(`${target.baseUrl}/v1/integrations/dlq/${id}/retry`, { method: 'POST', headers: bearer(token) });
}

function replay<T = { jobId: string; joined: boolean }>(token = operator.accessToken): Promise<JsonResponse<T>> {
  return call<T>(`${gateway.baseUrl}/v1/integrations/dlq/replay`, { method: 'POST', headers: bearer(token) });
}

function rpc<T>(method: string, request: object, token: string | null, on: Client = client): Promise<T> {
  const metadata = new Metadata();
  if (token !== null) metadata.set('authorization', bearer(token).authorization);
  return unaryCall<T>(on, method, request, metadata);
}

/** The status a call failed with, its details and its problem type (trailing metadata). */
async function failure(pending: Promise<unknown>): Promise<{ code: number; details: string; problem: string | undefined }> {
  try {
    await pending;
  } catch (error) {
    const { code, details, metadata } = error as ServiceError;
    return { code, details, problem: metadata?.get('problem-type')[0]?.toString() };
  }
  throw new Error('the call succeeded');
}

/** The redeliveries of an event on its topic (the messages that carry a redeliverTo header), once `count` arrived. */
async function redeliveriesOf(row: DeadLetterRow, count = 1) {
  const isRedelivery = (event: { envelope: { id: string }; headers: Record<string, string> }) =>
    event.envelope.id === row.eventId && event.headers.redeliverTo !== undefined;
  const events = await consumeTenantEvents({
    tenantId: row.tenantId, topics: [row.topic], until: (seen) => seen.filter(isRedelivery).length >= count,
  });
  return events.filter(isRedelivery);
}

/** The audit records of the tenant the outbox holds for `action`. */
async function auditRecords(tenantId: string, action: string) {
  return (await outboxEventsOf(owner, tenantId)).filter((event) => event.type === 'audit.record.created' && event.data.action === action);
}

describe('GET /integrations/dlq', () => {
  let first: DeadLetterRow;
  let resolved: DeadLetterRow;
  let last: DeadLetterRow;
  let lister: RegisteredAccount;

  beforeAll(async () => {
    lister = await registerAccount(gateway);
    first = await seed({ consumerGroup: 'crm.contacts-sync' }, lister);
    resolved = await seed({ consumerGroup: 'notify.welcome', type: 'crm.contact.updated', status: 'resolved', correlationId: null, traceId: null }, lister);
    last = await seed({ consumerGroup: 'crm.contacts-sync' }, lister);
  });

  const list = (query: string) => read<Page>(gateway, `/integrations/dlq${query}`, lister.accessToken);

  it('lists the tenant\'s dead letters newest first, as the proto\'s DLQRecord in snake_case', async () => {
    const response = await list('');
    expect(response.status).toBe(200);
    expect(response.body.data.map((record) => record.id)).toEqual([last.id, resolved.id, first.id]);
    expect(response.body.next_page_token).toBeUndefined();
    const envelope = first.envelope as { source: string; timestamp: string; traceId: string; data: Record<string, unknown> };
    expect(response.body.data[2]).toEqual({
      id: first.id,
      original_event: {
        event_id: first.eventId, event_type: 'crm.contact.created', source: envelope.source, tenant_id: lister.tenant.id,
        schema_version: '1.0.0', timestamp: envelope.timestamp, trace_id: envelope.traceId, correlation_id: first.correlationId,
        payload: envelope.data, entity_id: first.eventKey,
      },
      attempt_count: 5, last_error: 'handler failed: boom', dlq_timestamp: first.deadLetteredAt, consumer_group: 'crm.contacts-sync',
      status: 'pending', times_dead_lettered: 1, quarantined: false, topic: topics.data.name, partition: 2, offset: 41,
      updated_at: first.updatedAt, resolved_at: null, expires_at: first.expiresAt,
    });
    expect(response.body.data[1]).toEqual(expect.objectContaining({
      status: 'resolved', resolved_at: expect.any(String),
      original_event: expect.objectContaining({ trace_id: null, correlation_id: null, event_type: 'crm.contact.updated' }),
    }));
  });

  it.each([
    ['status=resolved', () => [resolved.id]],
    ['status=pending&consumer_group=crm.contacts-sync', () => [last.id, first.id]],
    ['event_type=crm.contact.updated', () => [resolved.id]],
    ['consumer_group=billing.nothing', () => []],
  ])('filters by %s', async (query, expected) => {
    const response = await list(`?${query}`);
    expect(response.status).toBe(200);
    expect(response.body.data.map((record) => record.id)).toEqual(expected());
  });

  it('pages with page_size/page_token and with limit/cursor', async () => {
    const pageOne = await list('?page_size=2');
    expect(pageOne.body.data.map((record) => record.id)).toEqual([last.id, resolved.id]);
    const pageTwo = await list(`?page_size=2&page_token=${pageOne.body.next_page_token!}`);
    expect(pageTwo.body).toEqual({ data: [expect.objectContaining({ id: first.id })] });

    const cursorOne = await list('?limit=2');
    expect(cursorOne.body.meta).toEqual({ cursor: expect.any(String), hasMore: true });
    const cursorTwo = await list(`?limit=2&cursor=${cursorOne.body.meta!.cursor!}`);
    expect(cursorTwo.body.data.map((record) => record.id)).toEqual([first.id]);
    expect(cursorTwo.body.meta).toEqual({ cursor: null, hasMore: false });
  });

  it('refuses a forged token, the two pagination pairs mixed and an unknown status with 400', async () => {
    expectProblem(gateway, await list('?page_token=bm90LWEtdG9rZW4'), 400, 'validation-error');
    expectProblem(gateway, await list('?page_size=2&cursor=abc'), 400, 'validation-error');
    expectProblem(gateway, await list('?status=lost'), 400, 'validation-error');
  });

  it('reads one dead letter; an unknown id and another tenant\'s are 404', async () => {
    const one = await read<DeadLetterView>(gateway, `/integrations/dlq/${first.id}`, lister.accessToken);
    expect(one.status).toBe(200);
    expect(one.body).toEqual((await list('')).body.data[2]);
    expectProblem(gateway, await read(gateway, `/integrations/dlq/${newId()}`, lister.accessToken), 404, 'not-found');
    expectProblem(gateway, await read(gateway, `/integrations/dlq/${first.id}`, stranger.accessToken), 404, 'not-found');
    expect((await read<Page>(gateway, '/integrations/dlq', stranger.accessToken)).body.data.map((record) => record.id))
      .not.toContain(first.id);
  });
});

describe('permissions', () => {
  it('reading needs events.dlq.read and retrying or replaying events.dlq.retry: a member has neither, an admin both', async () => {
    const row = await seed();
    const member = await addMember(gateway, owner, operator.tenant.id);
    for (const response of [
      await read(gateway, '/integrations/dlq', member.token), await read(gateway, `/integrations/dlq/${row.id}`, member.token),
      await retry(gateway, row.id, member.token), await replay(member.token),
    ]) expectProblem(gateway, response, 403, 'forbidden');
    expect(await failure(rpc('DLQRetry', { event_id: row.eventId }, member.token)))
      .toEqual({ code: status.PERMISSION_DENIED, details: 'The permission events.dlq.retry is required', problem: 'forbidden' });
    expect((await deadLetterState(owner, row.id)).status).toBe('pending');

    const admin = await addMember(gateway, owner, operator.tenant.id, 'admin');
    expect((await read(gateway, `/integrations/dlq/${row.id}`, admin.token)).status).toBe(200);
    expect((await retry(gateway, row.id, admin.token)).status).toBe(200);
  });

  it('is 401 without a token and UNAUTHENTICATED over gRPC', async () => {
    expect((await call(`${gateway.baseUrl}/v1/integrations/dlq`)).status).toBe(401);
    expect(await failure(rpc('DLQRetry', { event_id: newId() }, null))).toMatchObject({ code: status.UNAUTHENTICATED });
    expect(await failure(rpc('DLQReplayAll', {}, null))).toMatchObject({ code: status.UNAUTHENTICATED });
  });
});

describe('POST /integrations/dlq/:id/retry', () => {
  it('re-publishes a pending dead letter to its topic under its key, with its headers and redeliverTo, and marks it retrying', async () => {
    const row = await seed();
    const response = await retry(gateway, row.id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(expect.objectContaining({ id: row.id, status: 'retrying', updated_at: expect.any(String) }));

    const [redelivery] = await redeliveriesOf(row);
    expect({ topic: redelivery.topic, key: redelivery.key, envelope: redelivery.envelope }).toEqual({ topic: row.topic, key: row.eventKey, envelope: row.envelope });
    expect(redelivery.headers).toEqual({
      id: row.eventId, type: row.eventType, tenantId: row.tenantId, traceId: 'a'.repeat(32), correlationId: row.correlationId,
      redeliverTo: 'crm.contacts-sync',
    });
    expect(await auditRecords(row.tenantId, 'events.dlq.retried')).toContainEqual(expect.objectContaining({
      partitionKey: row.id,
      data: expect.objectContaining({
        entityType: 'event_dead_letter', entityId: row.id, actorId: operator.user.id, before: { status: 'pending' }, after: { status: 'retrying' },
        meta: expect.objectContaining({ eventId: row.eventId, consumerGroup: 'crm.contacts-sync' }),
      }),
    }));
  });

  it('re-publishes a retrying dead letter again (its earlier redelivery may be lost), and a quarantined one', async () => {
    const retrying = await seed({ status: 'retrying' });
    const again = (await retry(gateway, retrying.id)).body;
    expect(again.status).toBe('retrying');
    expect(Date.parse(String(again.updated_at))).toBeGreaterThan(Date.parse(retrying.updatedAt));
    expect(await redeliveriesOf(retrying)).toHaveLength(1);
    const quarantined = await seed({ quarantined: true });
    expect((await retry(gateway, quarantined.id)).body).toEqual(expect.objectContaining({ status: 'retrying', quarantined: true }));
  });

  it.each(['resolved', 'expired'] as const)('refuses a %s dead letter with 400 dead-letter-not-retryable, the row unchanged', async (state) => {
    const row = await seed({ status: state });
    const before = await deadLetterState(owner, row.id);
    const problem = expectProblem(gateway, await retry(gateway, row.id), 400, 'dead-letter-not-retryable');
    expect(problem).toEqual(expect.objectContaining({
      deadLetterStatus: state, detail: `Dead letter ${row.id} is ${state}; only a pending or retrying dead letter can be retried`,
    }));
    expect(await deadLetterState(owner, row.id)).toEqual(before);
  });

  it('answers 404 for another tenant\'s dead letter and leaves it pending', async () => {
    const row = await seed();
    expectProblem(gateway, await retry(gateway, row.id, stranger.accessToken), 404, 'not-found');
    expectProblem(gateway, await retry(gateway, newId()), 404, 'not-found');
    expect((await deadLetterState(owner, row.id)).status).toBe('pending');
  });
});

describe('gRPC DLQRetry', () => {
  it('re-publishes every open dead letter of the event, one per consumer group, and answers success', async () => {
    const sync = await seed({ consumerGroup: 'crm.contacts-sync' });
    const welcome = await seed({ eventId: sync.eventId, consumerGroup: `tenant.${operator.tenant.id}.notify.welcome` });
    await seed({ eventId: sync.eventId, consumerGroup: 'audit.trail', status: 'resolved' });
    const response = await rpc<{ success: boolean; message: string }>('DLQRetry', { event_id: sync.eventId }, operator.accessToken);
    expect(response).toEqual({
      success: true,
      message: `Event ${sync.eventId} was re-published to ${topics.data.name} for consumer groups crm.contacts-sync, tenant.${operator.tenant.id}.notify.welcome`,
    });
    const redeliveries = await redeliveriesOf(sync, 2);
    expect(redeliveries.map((event) => event.headers.redeliverTo).sort()).toEqual(['crm.contacts-sync', `tenant.${operator.tenant.id}.notify.welcome`]);
    expect([(await deadLetterState(owner, sync.id)).status, (await deadLetterState(owner, welcome.id)).status]).toEqual(['retrying', 'retrying']);
  });

  it('is NOT_FOUND for an unknown event id and for another tenant\'s event', async () => {
    const theirs = await seed({}, stranger);
    for (const eventId of [newId(), theirs.eventId]) {
      expect(await failure(rpc('DLQRetry', { event_id: eventId }, operator.accessToken)))
        .toEqual({ code: status.NOT_FOUND, details: 'The dead-lettered event was not found', problem: 'not-found' });
    }
    expect((await deadLetterState(owner, theirs.id)).status).toBe('pending');
  });

  it('is FAILED_PRECONDITION when the record is resolved or expired', async () => {
    const resolved = await seed({ status: 'resolved' });
    expect(await failure(rpc('DLQRetry', { event_id: resolved.eventId }, operator.accessToken))).toEqual({
      code: status.FAILED_PRECONDITION, problem: 'dead-letter-not-retryable',
      details: `Event ${resolved.eventId} is resolved; only a pending or retrying dead letter can be retried`,
    });
    const expired = await seed({ status: 'expired' });
    await seed({ eventId: expired.eventId, consumerGroup: 'audit.trail', status: 'resolved' });
    expect(await failure(rpc('DLQRetry', { event_id: expired.eventId }, operator.accessToken)))
      .toMatchObject({ code: status.FAILED_PRECONDITION, details: expect.stringContaining('is expired and resolved') });
  });

  it('is INVALID_ARGUMENT without a UUID', async () => {
    expect(await failure(rpc('DLQRetry', { event_id: '' }, operator.accessToken))).toMatchObject({ code: status.INVALID_ARGUMENT });
    expect(await failure(rpc('DLQRetry', { event_id: 'not-an-id' }, operator.accessToken))).toMatchObject({ code: status.INVALID_ARGUMENT });
  });
});

describe('a broker that is down', () => {
  it('is 503 events-broker-unavailable and UNAVAILABLE at once, the dead letter left pending', async () => {
    // A publish timeout far above the bound: answering within it shows the refused connection failed
    // the call at once, not the timeout, however slow the machine.
    const down = await startTestGateway({ env: { KAFKA_BROKERS: `127.0.0.1:${await closedPort()}`, EVENTS_PUBLISH_TIMEOUT_MS: '20000' } });
    const downClient = new (eventServiceClass())(down.grpcAddress, credentials.createInsecure());
    try {
      const row = await seed();
      const before = await deadLetterState(owner, row.id);
      const started = Date.now();
      const problem = expectProblem(down, await retry(down, row.id), 503, 'events-broker-unavailable');
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(problem.code).toBe('events.broker.unavailable');
      expect(await failure(rpc('DLQRetry', { event_id: row.eventId }, operator.accessToken, downClient)))
        .toMatchObject({ code: status.UNAVAILABLE, problem: 'events-broker-unavailable' });
      expect(await deadLetterState(owner, row.id)).toEqual(before);
      expect(await auditRecords(row.tenantId, 'events.dlq.retried')).not.toContainEqual(expect.objectContaining({ partitionKey: row.id }));
    } finally {
      downClient.close();
      await down.close();
    }
  }, 30_000);
});

describe('replay-all', () => {
  it('POST /integrations/dlq/replay answers 202 with a job; a second request joins it; the job completes with the totals', async () => {
    const account = await registerAccount(gateway);
    const pending = await Promise.all([1, 2, 3].map(() => seed({}, account)));
    const quarantined = await seed({ quarantined: true }, account);
    await seed({ status: 'resolved' }, account);

    const accepted = await replay(account.accessToken);
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ jobId: expect.stringMatching(/^events-dlq-replay\.[0-9a-f-]{36}$/), joined: false });
    expect(accepted.headers.get('location')).toBe(`/v1/jobs/${accepted.body.jobId}`);
    // No worker polls the queue yet: the replay is still running, and a second request joins it.
    const again = await replay(account.accessToken);
    expect({ status: again.status, body: again.body }).toEqual({ status: 202, body: { jobId: accepted.body.jobId, joined: true } });
    expect((await read<JobView>(gateway, `/jobs/${accepted.body.jobId}`, account.accessToken)).body)
      .toEqual(expect.objectContaining({ kind: 'events-dlq-replay', status: 'running' }));
    expectProblem(gateway, await read(gateway, `/jobs/${accepted.body.jobId}`, operator.accessToken), 404, 'not-found');
    expect(await auditRecords(account.tenant.id, 'events.dlq.replay_requested')).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ entityId: accepted.body.jobId, meta: { joined: false } }) }),
      expect.objectContaining({ data: expect.objectContaining({ entityId: accepted.body.jobId, meta: { joined: true } }) }),
    ]);

    runWorker();
    let job: JobView | undefined;
    await waitFor('the replay job', async () => {
      job = (await read<JobView>(gateway, `/jobs/${accepted.body.jobId}`, account.accessToken)).body;
      return job.status !== 'running';
    }, 60_000);
    expect(job).toEqual(expect.objectContaining({ status: 'completed', result: { replayed: 3, skippedAlreadyResolved: 1 } }));
    for (const row of pending) expect((await deadLetterState(owner, row.id)).status).toBe('retrying');
    expect((await deadLetterState(owner, quarantined.id)).status).toBe('pending');
    const replayed = await auditRecords(account.tenant.id, 'events.dlq.replayed');
    expect(replayed.map((record) => record.data.entityId).sort()).toEqual(pending.map((row) => row.id).sort());
    expect(replayed[0].data.meta).toEqual(expect.objectContaining({ jobId: accepted.body.jobId }));
    await redeliveriesOf(pending[2]);
  }, 90_000);

  it('gRPC DLQReplayAll starts the tenant\'s replay and answers its totals once it is done', async () => {
    runWorker();
    const account = await registerAccount(gateway);
    await Promise.all([seed({}, account), seed({}, account), seed({ status: 'resolved' }, account), seed({ status: 'resolved' }, account)]);
    await seed({}, stranger);
    expect(await rpc('DLQReplayAll', {}, account.accessToken)).toEqual({ replayed: 2, skipped_already_resolved: 2 });
    // Nothing pending any more: a new replay re-publishes nothing and counts the resolved ones again.
    expect(await rpc('DLQReplayAll', {}, account.accessToken)).toEqual({ replayed: 0, skipped_already_resolved: 2 });
    const description = await server.client.workflow.getHandle(deadLetterReplayWorkflowId(account.tenant.id)).describe();
    expect(description.status.name).toBe('COMPLETED');
  }, 60_000);
});
