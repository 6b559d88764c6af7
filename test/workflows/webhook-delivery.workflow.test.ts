import type { WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { tsToMs } from '@temporalio/common/lib/time';
import { createWebhookActivities } from '../../activities/events/webhooks.activities';
import { config } from '../../common/config';
import type { EventEnvelope } from '../../common/event-envelope';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { attemptWebhook } from '../../services/events/webhooks/attempt';
import { topics } from '../../services/events/topics';
import type { webhookDelivery } from '../../workflows/events/webhook-delivery.workflow';
import {
  WEBHOOK_DISABLE_AFTER_MS, WEBHOOK_RETRY_DELAYS_MS, webhookConsumerGroup, webhookDeliveryWorkflowId, type WebhookDeliveryInput,
} from '../../workflows/events/webhooks.messages';
import { migrateSharedDatabase } from '../helpers/db';
import { seedFilesTenant, type FilesTenant } from '../helpers/files-scan';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';
import { seedWebhookEndpoint, startWebhookReceiver, testWebhookPolicy, type WebhookReceiver } from '../helpers/webhooks';

/**
 * The delivery workflow (workflows/events/webhook-delivery.workflow.ts) under Temporal's
 * time-skipping test server, with its real activities (PostgreSQL on the application role, HTTP to a
 * local receiver that checks the signatures with the standardwebhooks package): a delivery, the
 * seven retries' schedule read from the history with the same webhook-id on every request, the dead
 * letter after the last, and the endpoint turned off (its owners mailed) once every attempt has
 * failed for 5 days.
 */
jest.setTimeout(180_000);

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

let env: TestWorkflowEnvironment;
let owner: DatabasePool;
let app: DatabasePool;
let tenant: FilesTenant;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();
const taskQueue = uniqueTaskQueue('webhook-delivery');
// Nobody polls it: the owners' mail is seen as the child workflow the delivery starts.
const notifyTaskQueue = uniqueTaskQueue('webhook-delivery-notify');

beforeAll(async () => {
  await migrateSharedDatabase();
  [env, owner, app] = await Promise.all([
    createTimeSkippingEnv(),
    createDbPool(config().db.ownerUrl, { name: 'test-webhook-delivery-owner', maxPoolSize: 2 }),
    createDbPool(config().db.url, { name: 'test-webhook-delivery-app', maxPoolSize: 2 }),
  ]);
  tenant = await seedFilesTenant(owner);
  // `/fail…` paths answer 500, every other path 204.
  receiver = await startWebhookReceiver({ status: (path) => (path.startsWith('/fail') ? 500 : 204), secrets: () => [...secrets.values()] });
});

afterAll(async () => {
  await env?.teardown();
  await receiver?.close();
  await Promise.all([owner?.end(), app?.end()]);
});

async function endpoint(path: string) {
  const row = await seedWebhookEndpoint(owner, tenant.tenantId, receiver.url(path));
  secrets.set(row.id, row.secret);
  return row;
}

function envelopeOf(type = 'test.item.changed'): EventEnvelope {
  return {
    id: newId(), type, source: 'test', tenantId: tenant.tenantId, data: { n: 1 }, schemaVersion: '1.0.0',
    timestamp: new Date().toISOString(), traceId: null,
  };
}

const source = { topic: topics.data.name, partition: 3, offset: '77', key: 'item-1', correlationId: 'corr-1' };

function start(endpointId: string, envelope = envelopeOf()): Promise<WorkflowHandle<typeof webhookDelivery>> {
  const input: WebhookDeliveryInput = { tenantId: tenant.tenantId, endpointId, envelope, source, notifyTaskQueue };
  return env.client.workflow.start<typeof webhookDelivery>('webhookDelivery', {
    taskQueue, workflowId: webhookDeliveryWorkflowId(tenant.tenantId, endpointId, envelope.id), args: [input],
  });
}

function running<T>(work: () => Promise<T>): Promise<T> {
  return (async () => {
    const activities = createWebhookActivities({
      appPool: app, logger: createLogger('webhook-test', 'silent'), policy: testWebhookPolicy, consumers: config().consumers,
    });
    const worker = await createTestWorker(env, { taskQueue, activities });
    return worker.runUntil(work);
  })();
}

async function historyOf(handle: WorkflowHandle): Promise<HistoryEvent[]> {
  return (await handle.fetchHistory()).events ?? [];
}

const attemptsOf = (endpointId: string) => owner.any(sql.unsafe`
  SELECT attempt, status, response_status AS "responseStatus", attempted_at AS "attemptedAt", next_attempt_at AS "nextAttemptAt"
  FROM webhook_attempts WHERE endpoint_id = ${endpointId} ORDER BY attempt
`) as Promise<readonly { attempt: number; status: string; responseStatus: number | null; attemptedAt: string; nextAttemptAt: string | null }[]>;

it('delivers a signed {id, type, timestamp, data} once the receiver answers 2xx', async () => {
  const target = await endpoint('/ok');
  const envelope = envelopeOf();
  const result = await running(async () => (await start(target.id, envelope)).result());

  expect(result).toEqual({ status: 'delivered', attempts: 1, responseStatus: 204 });
  const [request] = receiver.at('/ok');
  expect(request.payload).toEqual({ id: envelope.id, type: envelope.type, timestamp: envelope.timestamp, data: envelope.data });
  expect(request.headers['webhook-id']).toBe(envelope.id);
  expect(request.verifiedBy).toEqual([target.secret]);
  expect(await attemptsOf(target.id)).toEqual([expect.objectContaining({ attempt: 1, status: 'succeeded', responseStatus: 204, nextAttemptAt: null })]);
});

it('retries a failing receiver after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h with the same webhook-id, then dead-letters the event', async () => {
  const target = await endpoint('/fail-schedule');
  const envelope = envelopeOf();
  const { result, history } = await running(async () => {
    const handle = await start(target.id, envelope);
    return { result: await handle.result(), history: await historyOf(handle) };
  });

  expect(result).toEqual({ status: 'dead-lettered', attempts: 8, responseStatus: 500 });
  const timers = history.filter((event) => event.timerStartedEventAttributes)
    .map((event) => tsToMs(event.timerStartedEventAttributes!.startToFireTimeout));
  expect(timers).toEqual(WEBHOOK_RETRY_DELAYS_MS);

  const requests = receiver.at('/fail-schedule');
  expect(requests).toHaveLength(8);
  expect(new Set(requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([envelope.id]));
  expect(requests.every((request) => request.verifiedBy.length === 1)).toBe(true);

  const attempts = await attemptsOf(target.id);
  expect(attempts.map((attempt) => [attempt.attempt, attempt.status, attempt.responseStatus])).toEqual(
    Array.from({ length: 8 }, (_, i) => [i + 1, 'failed', 500]),
  );
  // Each failed attempt says when the next is due: its own time plus the pause, and the last says none.
  expect(attempts.map((attempt) => (attempt.nextAttemptAt === null ? null : Date.parse(attempt.nextAttemptAt) - Date.parse(attempt.attemptedAt))))
    .toEqual([...WEBHOOK_RETRY_DELAYS_MS, null]);

  const letter = await owner.one(sql.unsafe`
    SELECT consumer_group AS "consumerGroup", status, attempt_count AS "attemptCount", topic, partition, "offset"::text AS "offset",
      event_key AS "eventKey", correlation_id AS "correlationId", last_error AS "lastError", envelope
    FROM event_dead_letters WHERE tenant_id = ${tenant.tenantId} AND event_id = ${envelope.id}
  `);
  expect(letter).toEqual({
    consumerGroup: webhookConsumerGroup(target.id), status: 'pending', attemptCount: 8, topic: source.topic, partition: 3, offset: '77',
    eventKey: 'item-1', correlationId: 'corr-1', lastError: 'answered HTTP 500', envelope,
  });
  // 27.6 hours of failures are not 5 days: the endpoint stays on, its streak started at the first attempt.
  expect(await owner.one(sql.unsafe`SELECT enabled, failing_since AS "failingSince" FROM webhook_endpoints WHERE id = ${target.id}`))
    .toEqual({ enabled: true, failingSince: attempts[0].attemptedAt });
});

it('turns an endpoint off once every attempt has failed for 5 days, and mails the tenant\'s owners once', async () => {
  const target = await endpoint('/fail-days');
  const { first, second, history } = await running(async () => {
    // The first event fails all its attempts over about 27.6 hours...
    const first = await (await start(target.id)).result();
    // ...the next one comes 3.5 days later (4.65 days into the streak), and its seventh attempt, 17 h 35 min
    // after its first, is the first past 5 days. (With 3 days the eighth and last would be, leaving no attempt
    // to spare, and the test at the mercy of the test server's clock between the two runs.)
    await env.sleep('84 hours');
    const handle = await start(target.id);
    return { first, second: await handle.result(), history: await historyOf(handle) };
  });

  expect(first.status).toBe('dead-lettered');
  expect(second).toEqual({ status: 'dead-lettered', attempts: expect.any(Number), responseStatus: 500 });
  expect(second.attempts).toBeLessThan(8);
  const row = await owner.one(sql.unsafe`
    SELECT enabled, disabled_reason AS "disabledReason", failing_since IS NOT NULL AS failing FROM webhook_endpoints WHERE id = ${target.id}
  `);
  expect(row).toEqual({ enabled: false, disabledReason: 'failing', failing: true });

  const mails = history.filter((event) => event.startChildWorkflowExecutionInitiatedEventAttributes)
    .map((event) => event.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId);
  expect(mails).toEqual([expect.stringMatching(new RegExp(`^notify\\.email:webhooks:${tenant.tenantId}:${target.id}:disabled:\\d+:${tenant.owner.email}$`))]);

  // An event for the endpoint now that it is off sends nothing and is dead-lettered at once.
  const before = receiver.at('/fail-days').length;
  const third = await running(async () => (await start(target.id)).result());
  expect(third).toEqual({ status: 'dead-lettered', attempts: 0, responseStatus: null });
  expect(receiver.at('/fail-days')).toHaveLength(before);
});

it('turns the endpoint off on the failure 5 days after the streak began, not a millisecond sooner (the activity alone)', async () => {
  const target = await endpoint('/fail-edge');
  const deps = { appPool: app, policy: testWebhookPolicy, consumers: config().consumers };
  const start = Date.parse('2030-01-01T00:00:00.000Z');
  const attempt = (n: number, afterMs: number) => attemptWebhook(deps, {
    tenantId: tenant.tenantId, endpointId: target.id, envelope: envelopeOf(), attempt: n,
    attemptedAt: new Date(start + afterMs).toISOString(), nextAttemptAt: null, evenIfDisabled: false,
  }, `run-${target.id}`);
  expect(await attempt(1, 0)).toMatchObject({ outcome: 'failed', responseStatus: 500, disabledNow: false });
  expect(await attempt(2, WEBHOOK_DISABLE_AFTER_MS - 1)).toMatchObject({ outcome: 'failed', disabledNow: false });
  expect(await attempt(3, WEBHOOK_DISABLE_AFTER_MS)).toMatchObject({ outcome: 'failed', disabledNow: true, url: receiver.url('/fail-edge') });
  expect(await attempt(4, WEBHOOK_DISABLE_AFTER_MS + 1)).toEqual({ outcome: 'endpoint-disabled' });
  expect(receiver.at('/fail-edge')).toHaveLength(3);
});

it('ends quietly when the endpoint was deleted', async () => {
  const target = await endpoint('/gone');
  await owner.query(sql.unsafe`DELETE FROM webhook_endpoints WHERE id = ${target.id}`);
  const result = await running(async () => (await start(target.id)).result());
  expect(result).toEqual({ status: 'endpoint-gone', attempts: 0, responseStatus: null });
  expect(receiver.at('/gone')).toHaveLength(0);
});
