import { z } from 'zod';
import { AuditIntake, auditMessage } from '../../services/audit/record-publisher';
import { recordAudit, type AuditDraft } from '../../services/audit/writer';
import { encodeEvent } from '../../services/events/envelope';
import { newId } from '../../common/ids';
import { createKafka, ReconnectingProducer } from '../../common/kafka';
import { config } from '../../common/config';
import { sql } from '../../db/pool';
import { selectPendingOutboxEvents } from '../../db/queries/events/outbox.queries';
import { AuditConsumer } from '../../workers/audit/consumer';
import { AuditFallbackReplayer } from '../../workers/audit/fallback-replay';
import { AuditStore } from '../../services/audit/store';
import { verifyTenantChain } from '../../services/audit/verify';
import { outboxRowToEvent } from '../../workers/outbox/publisher';
import {
  createAuditDatabase, createTestTopic, eventually, quietLogger, type AuditDatabase, type TestTopic,
} from '../helpers/audit';

/**
 * The intake pipeline against real Kafka and PostgreSQL: writer and direct intake → Kafka → the
 * audit consumer → the chained store, and the fallback buffer while Kafka is unreachable. It uses a
 * scratch database and a topic of its own, so the platform's running consumer never sees its records.
 */

jest.setTimeout(60_000);

const CLOSED_PORT = ['127.0.0.1:1'];
const logger = quietLogger();
const intakeSettings = { publishTimeoutMs: 2000, kafkaRetryMs: 60_000 };

let db: AuditDatabase;
let topic: TestTopic;
let consumer: AuditConsumer;
let producer: ReconnectingProducer;

beforeAll(async () => {
  [db, topic] = await Promise.all([createAuditDatabase('platform_audit_pipeline_test'), createTestTopic('audit')]);
  consumer = new AuditConsumer({
    kafka: topic.kafka, store: new AuditStore(db.owner), logger, topic: topic.name,
    settings: { groupId: `test.audit.${newId()}`, chunkSize: 100, partitionsConcurrently: 3 },
  });
  await consumer.start();
  producer = new ReconnectingProducer(topic.kafka);
});

afterAll(async () => {
  await producer?.reset();
  await consumer?.stop();
  await topic?.drop();
  await db?.close();
});

const draftOf = (tenantId: string, n: number): AuditDraft => ({
  tenantId, source: 'jest', action: 'billing.subscription.updated', entityType: 'subscription', entityId: `sub-${n % 4}`,
  actorId: newId(), actorIp: '192.0.2.1', actorUserAgent: 'jest', before: { plan: 'free' }, after: { plan: 'pro' }, meta: { n },
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
});

const storedIds = async (tenantId: string) => new Set(await db.owner.anyFirst(sql.type(z.object({ id: z.string() }))`
  SELECT id FROM audit_records WHERE tenant_id = ${tenantId}
`));

const untilStored = (tenantId: string, ids: readonly string[]) => eventually(async () => {
  const stored = await storedIds(tenantId);
  return ids.every((id) => stored.has(id));
}, `${ids.length} record(s) of tenant ${tenantId} in the store`);

const bufferedCount = () => db.owner.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM audit_fallback_buffer`);

describe('direct intake through Kafka', () => {
  it('stores every record with the injected fields, chained', async () => {
    const tenantId = newId();
    const intake = new AuditIntake({ kafka: topic.kafka, bufferDb: db.app, logger, settings: intakeSettings, topic: topic.name });
    try {
      const accepted = await intake.publishAuditRecords(Array.from({ length: 40 }, (_, n) => draftOf(tenantId, n)));
      expect(accepted).toHaveLength(40);
      expect(accepted[0]).toEqual({ auditId: expect.any(String), status: 'queued', createdAt: expect.any(String) });
      await untilStored(tenantId, accepted.map((a) => a.auditId));
      const first = await db.owner.one(sql.type(z.object({
        actorIp: z.string(), traceId: z.string(), occurredAt: z.string(), after: z.unknown(),
      }))`
        SELECT actor_ip AS "actorIp", trace_id AS "traceId", occurred_at AS "occurredAt", after
        FROM audit_records WHERE id = ${accepted[0].auditId}
      `);
      expect(first).toEqual({
        actorIp: '192.0.2.1', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', occurredAt: accepted[0].createdAt, after: { plan: 'pro' },
      });
      expect(await bufferedCount()).toBe(0);
      expect(await verifyTenantChain(db.app, tenantId)).toEqual({ ok: true, tenantId, records: 40, archived: 0, archivesRead: 0 });
    } finally {
      await intake.close();
    }
  });

  it('refuses an invalid record before anything is sent', async () => {
    const intake = new AuditIntake({ kafka: topic.kafka, bufferDb: db.app, logger, settings: intakeSettings, topic: topic.name });
    await expect(intake.publishAuditRecords([{ ...draftOf(newId(), 1), entityId: '' }])).rejects.toMatchObject({ type: 'validation-error' });
    await expect(intake.publishAuditRecords([{ ...draftOf('not-a-uuid', 1) }])).rejects.toMatchObject({ type: 'validation-error' });
  });
});

describe('redelivery and foreign messages', () => {
  it('stores a redelivered event once, and skips a message that is no audit record without stopping', async () => {
    const tenantId = newId();
    const intake = new AuditIntake({ kafka: topic.kafka, bufferDb: db.app, logger, settings: intakeSettings, topic: topic.name });
    const draft = draftOf(tenantId, 1);
    const [accepted] = await intake.publishAuditRecords([draft]);
    await intake.close();
    await untilStored(tenantId, [accepted.auditId]);

    // The same event again (a relay that crashed before marking it), on the same key, then garbage
    // on that partition, then a new record behind both.
    const same = await db.owner.one(sql.type(z.object({ entityId: z.string(), timestamp: z.string() }))`
      SELECT entity_id AS "entityId", occurred_at AS "timestamp" FROM audit_records WHERE id = ${accepted.auditId}
    `);
    const { tenantId: _tenant, source, traceId, ...data } = draft;
    const envelope = {
      id: accepted.auditId, type: 'audit.record.created', source, tenantId, data: { ...data, impersonatorId: null },
      schemaVersion: '1.0.0', timestamp: same.timestamp, traceId: traceId ?? null,
    };
    const later = newId();
    await producer.send([
      auditMessage({ key: same.entityId, envelope }, topic.name),
      { topic: topic.name, key: same.entityId, value: 'not json', headers: {} },
      auditMessage({ key: same.entityId, envelope: { ...envelope, id: later, timestamp: new Date().toISOString() } }, topic.name),
    ]);
    await untilStored(tenantId, [later]);
    expect((await storedIds(tenantId)).size).toBe(2);
    expect(consumer.status().rejected).toBeGreaterThanOrEqual(1);
    expect(await verifyTenantChain(db.app, tenantId)).toEqual({ ok: true, tenantId, records: 2, archived: 0, archivesRead: 0 });
  });
});

describe('the writer (transactional outbox)', () => {
  it('writes nothing when the business transaction rolls back, and one outbox event when it commits', async () => {
    const tenantId = newId();
    await expect(db.owner.transaction(async (tx) => {
      await recordAudit(tx, draftOf(tenantId, 1));
      throw new Error('business change failed');
    })).rejects.toThrow('business change failed');
    const auditId = await db.owner.transaction((tx) => recordAudit(tx, draftOf(tenantId, 2)));

    const rows = (await selectPendingOutboxEvents(db.owner, 1000)).filter((row) => row.tenantId === tenantId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: auditId, topic: 'platform.audit.events', type: 'audit.record.created', partitionKey: 'sub-2',
      data: expect.objectContaining({ action: 'billing.subscription.updated', meta: { n: 2 } }),
    });

    // What the relay would send, sent to this test's topic instead of the shared one.
    await producer.send(rows.map((row) => ({ ...encodeEvent(outboxRowToEvent(row)), topic: topic.name })));
    await untilStored(tenantId, [auditId]);
  });
});

describe('Kafka unreachable', () => {
  it('buffers records durably and stores them after the replay once Kafka is back', async () => {
    const tenantId = newId();
    const down = new AuditIntake({
      kafka: createKafka({ ...config().kafka, brokers: CLOSED_PORT, clientId: 'audit-intake-down' }), bufferDb: db.app, logger,
      settings: intakeSettings, topic: topic.name,
    });
    const accepted: string[] = [];
    const sends = jest.spyOn(ReconnectingProducer.prototype, 'send');
    try {
      // The first call waits for Kafka to fail; the next ones, within kafkaRetryMs (60 s), go to the
      // buffer without asking Kafka again.
      for (let batch = 0; batch < 3; batch += 1) {
        const answers = await down.publishAuditRecords(Array.from({ length: 10 }, (_, n) => draftOf(tenantId, batch * 10 + n)));
        accepted.push(...answers.map((a) => a.auditId));
      }
      expect(sends).toHaveBeenCalledTimes(1);
    } finally {
      sends.mockRestore();
      await down.close();
    }
    expect(await bufferedCount()).toBe(30);
    expect((await storedIds(tenantId)).size).toBe(0);

    // Kafka is back: one replay round (the consumer process runs one every 30 s).
    const replayer = new AuditFallbackReplayer({
      pool: db.owner, kafka: createKafka(config().kafka), logger, topic: topic.name,
      settings: { intervalMs: 30_000, batchSize: 7, alarmAfterDays: 7 },
    });
    try {
      expect(await replayer.replayOnce()).toBe(30);
    } finally {
      replayer.stop();
      await replayer.run();
    }
    expect(await bufferedCount()).toBe(0);
    await untilStored(tenantId, accepted);
    expect(await verifyTenantChain(db.app, tenantId)).toEqual({ ok: true, tenantId, records: 30, archived: 0, archivesRead: 0 });
  });

  it('keeps the rows when the replay cannot reach Kafka either', async () => {
    const tenantId = newId();
    const down = new AuditIntake({
      kafka: createKafka({ ...config().kafka, brokers: CLOSED_PORT, clientId: 'audit-intake-down' }), bufferDb: db.app, logger,
      settings: intakeSettings, topic: topic.name,
    });
    await down.publishAuditRecords([draftOf(tenantId, 1)]);
    await down.close();
    const replayer = new AuditFallbackReplayer({
      pool: db.owner, kafka: createKafka({ ...config().kafka, brokers: CLOSED_PORT, clientId: 'audit-replay-down' }), logger, topic: topic.name,
      settings: { intervalMs: 30_000, batchSize: 10, alarmAfterDays: 7 },
    });
    await expect(replayer.replayOnce()).rejects.toThrow();
    replayer.stop();
    await replayer.run();
    expect(await bufferedCount()).toBe(1);
  });
});
