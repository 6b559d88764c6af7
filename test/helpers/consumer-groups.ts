import { z } from 'zod';
import { newId } from '../../common/ids';
import { ReconnectingProducer, type Kafka, type OutgoingRecord } from '../../common/kafka';
import { sql, type DatabasePool, type DatabaseTransactionConnection } from '../../db/pool';
import type { ConsumerSettings, Delivery } from '../../services/events/consumers/group-consumer';
import { EVENT_HEADERS, encodeEvent } from '../../services/events/envelope';
import type { EventEnvelope } from '../../common/event-envelope';

/**
 * Consumer groups against real Kafka and PostgreSQL (services/events/consumers/): events of test
 * tenants on a topic of the test's own, and a table of effects on a scratch database, written by a
 * handler in the delivery's transaction, so a test can count how often each event took effect and
 * in which order.
 */

/** Short pauses: the tests wait for outcomes, not for the default backoff. */
export const testConsumerSettings: ConsumerSettings = {
  maxAttempts: 3, retryBackoffMs: 5, dedupHours: 24, dlqRetentionHours: 168, dlqQuarantineAfter: 3,
};

/** One event of a test: `n` counts the events of its key, so the order per key can be checked. */
export interface TestEvent {
  envelope: EventEnvelope;
  key: string;
  n: number;
}

export function testEvent(tenantId: string, key: string, n: number, type = 'test.item.changed'): TestEvent {
  return {
    key, n,
    envelope: {
      id: newId(), type, source: 'test', tenantId, data: { key, n }, schemaVersion: '1.0.0',
      timestamp: new Date().toISOString(), traceId: null,
    },
  };
}

/** `count` events per key for each tenant, keys interleaved as traffic would be. */
export function testEvents(tenantIds: readonly string[], keysPerTenant: number, count: number): TestEvent[] {
  const keys = tenantIds.flatMap((tenantId) => Array.from({ length: keysPerTenant }, () => ({ tenantId, key: newId() })));
  return Array.from({ length: count }, (_, i) => keys.map(({ tenantId, key }) => testEvent(tenantId, key, i + 1))).flat();
}

/** The message of an event on `topic` (encodeEvent's), with extra headers (a redelivery's `redeliverTo`). */
export function recordOf(topic: string, event: TestEvent, extraHeaders: Record<string, string> = {}): OutgoingRecord {
  const message = encodeEvent({ topic: 'platform.data.events', key: event.key, envelope: event.envelope, correlationId: null });
  return { topic, key: message.key, value: message.value, headers: { ...message.headers, ...extraHeaders } };
}

export const redeliveryOf = (topic: string, event: TestEvent, groupId: string) => recordOf(topic, event, { [EVENT_HEADERS.redeliverTo]: groupId });

export async function publish(kafka: Kafka, records: readonly OutgoingRecord[]): Promise<void> {
  const producer = new ReconnectingProducer(kafka);
  try {
    await producer.send(records);
  } finally {
    await producer.reset();
  }
}

/** The effects table: one row per effect, `seq` in the order they were written. */
export async function createEffectsTable(owner: DatabasePool): Promise<void> {
  await owner.query(sql.unsafe`
    CREATE TABLE IF NOT EXISTS consumer_effects (
      seq        bigserial PRIMARY KEY,
      group_id   text NOT NULL,
      tenant_id  uuid NOT NULL,
      tx_tenant  uuid,
      event_id   uuid NOT NULL,
      event_key  text NOT NULL,
      n          integer NOT NULL
    )
  `);
}

/** Records the delivery's effect in its transaction, with the tenant the transaction runs for. */
export async function writeEffect(tx: DatabaseTransactionConnection, groupId: string, { event }: Delivery): Promise<void> {
  const { id, tenantId, data } = event.envelope;
  await tx.query(sql.unsafe`
    INSERT INTO consumer_effects (group_id, tenant_id, tx_tenant, event_id, event_key, n)
    VALUES (${groupId}, ${tenantId}, current_tenant_id(), ${id}, ${event.key}, ${Number(data.n)})
  `);
}

const effectRow = z.object({ tenantId: z.string(), txTenant: z.string().nullable(), eventId: z.string(), eventKey: z.string(), n: z.number() });
export type EffectRow = z.infer<typeof effectRow>;

export function effectsOf(owner: DatabasePool, groupId: string): Promise<readonly EffectRow[]> {
  return owner.any(sql.type(effectRow)`
    SELECT tenant_id AS "tenantId", tx_tenant AS "txTenant", event_id AS "eventId", event_key AS "eventKey", n
    FROM consumer_effects WHERE group_id = ${groupId} ORDER BY seq
  `);
}

/**
 * Every event took effect exactly once, and the events of each key in the order they were
 * published (their `n` ascending, in the order the effects were written).
 */
export function expectExactlyOnceInOrder(effects: readonly EffectRow[], events: readonly TestEvent[]): void {
  const perEvent = new Map<string, number>();
  for (const effect of effects) perEvent.set(effect.eventId, (perEvent.get(effect.eventId) ?? 0) + 1);
  expect([...perEvent.values()].filter((count) => count !== 1)).toEqual([]);
  expect(new Set(perEvent.keys())).toEqual(new Set(events.map((event) => event.envelope.id)));
  const perKey = new Map<string, number[]>();
  for (const effect of effects) perKey.set(effect.eventKey, [...(perKey.get(effect.eventKey) ?? []), effect.n]);
  for (const ns of perKey.values()) expect(ns).toEqual([...ns].sort((a, b) => a - b));
}

const deadLetter = z.object({
  id: z.string(), consumerGroup: z.string(), topic: z.string(), partition: z.number(), offset: z.string(), eventKey: z.string(),
  eventId: z.string(), eventType: z.string(), envelope: z.record(z.string(), z.unknown()), attemptCount: z.number(), lastError: z.string(),
  status: z.string(), timesDeadLettered: z.number(), quarantined: z.boolean(), resolvedAt: z.string().nullable(),
});

export function deadLettersOf(owner: DatabasePool, groupId: string) {
  return owner.any(sql.type(deadLetter)`
    SELECT id, consumer_group AS "consumerGroup", topic, partition, "offset"::text AS "offset", event_key AS "eventKey", event_id AS "eventId",
           event_type AS "eventType", envelope, attempt_count AS "attemptCount", last_error AS "lastError", status,
           times_dead_lettered AS "timesDeadLettered", quarantined, resolved_at AS "resolvedAt"
    FROM event_dead_letters WHERE consumer_group = ${groupId} ORDER BY dead_lettered_at
  `);
}

export function receiptCount(owner: DatabasePool, groupId: string): Promise<number> {
  return owner.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM event_receipts WHERE consumer_group = ${groupId}`);
}
