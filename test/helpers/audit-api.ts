import { z } from 'zod';
import { encodeEvent } from '../../services/events/envelope';
import { newId } from '../../common/ids';
import { ReconnectingProducer } from '../../common/kafka';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { AuditConsumer } from '../../workers/audit/consumer';
import { AuditFallbackReplayer } from '../../workers/audit/fallback-replay';
import { AuditStore } from '../../services/audit/store';
import { outboxRowToEvent } from '../../workers/outbox/publisher';
import { markOutboxEventsPublished, selectOutboxEventsOfTenant } from '../../db/queries/events/outbox.queries';
import { startTestGateway, type TestGateway } from './app';
import { createTestTopic, eventually, quietLogger, type TestTopic } from './audit';
import { migrateSharedDatabase, ownerUrl } from './db';
import { addMembership, bearer, post, registerAccount } from './identity';

/**
 * The audit API against the whole pipeline: the real gateway sends its intake to a topic of this
 * test file, and an audit consumer running in this process stores that topic into the test
 * database (the platform's running consumer writes into another database and never sees it).
 * A fallback replayer runs beside it, as in the consumer process: on a busy machine the intake's
 * Kafka send can outlast AUDIT_PUBLISH_TIMEOUT_MS and the records go to the buffer instead.
 */
export interface AuditApiStack {
  gateway: TestGateway;
  /** The owner role on the test database: the consumer's connection, and the tests' look into the store. */
  owner: DatabasePool;
  topic: TestTopic;
  close(): Promise<void>;
}

export async function startAuditApiStack(prefix: string, env: Record<string, string> = {}): Promise<AuditApiStack> {
  await migrateSharedDatabase();
  const topic = await createTestTopic(prefix);
  const owner = await createDbPool(ownerUrl(), { maxPoolSize: 6, name: `${prefix}-owner` });
  const consumer = new AuditConsumer({
    kafka: topic.kafka, store: new AuditStore(owner), logger: quietLogger(), topic: topic.name,
    settings: { groupId: `test.${prefix}.${newId()}`, chunkSize: 500, partitionsConcurrently: 3 },
  });
  await consumer.start();
  const replayer = new AuditFallbackReplayer({
    pool: owner, kafka: topic.kafka, logger: quietLogger(), topic: topic.name,
    settings: { intervalMs: 500, batchSize: 500, alarmAfterDays: 7 },
  });
  const replaying = replayer.run();
  // The tests count the records they write; the gateway's own request records would join them.
  const gateway = await startTestGateway({ env: { AUDIT_INTAKE_TOPIC: topic.name, AUDIT_REQUEST_ENABLED: 'false', ...env } });
  return {
    gateway, owner, topic,
    async close() {
      await gateway.close();
      replayer.stop();
      await replaying;
      await consumer.stop();
      await topic.drop();
      await owner.end();
    },
  };
}

/** Waits until the store holds every one of these record ids. */
export function untilStored(owner: DatabasePool, ids: readonly string[]): Promise<void> {
  return eventually(async () => {
    const found = await owner.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM audit_records WHERE id = ANY(${sql.array(ids, 'uuid')})
    `);
    return found === ids.length;
  }, `${ids.length} audit record(s) in the store`);
}

/**
 * Plays the outbox relay for one tenant's audit events: sends them to the test topic and marks them
 * published. Rows the platform's relay already published (when the tests share its database) are
 * sent again; the consumer drops the copies by id. Returns their ids.
 */
export async function relayAuditOutbox(stack: AuditApiStack, tenantId: string): Promise<string[]> {
  const rows = (await selectOutboxEventsOfTenant(stack.owner, tenantId)).filter((row) => row.topic === 'platform.audit.events');
  const producer = new ReconnectingProducer(stack.topic.kafka);
  try {
    await producer.send(rows.map((row) => ({ ...encodeEvent(outboxRowToEvent(row)), topic: stack.topic.name })));
    await markOutboxEventsPublished(stack.owner, rows.map((row) => row.seq));
  } finally {
    await producer.reset();
  }
  return rows.map((row) => row.id);
}

/** Another account of the tenant with a built-in role, and its token in that tenant. */
export async function memberToken(stack: AuditApiStack, tenantId: string, roleName: string): Promise<{ token: string; userId: string }> {
  const account = await registerAccount(stack.gateway);
  await addMembership(stack.owner, tenantId, account.user.id, roleName);
  const switched = await post(stack.gateway, '/auth/switch-tenant', { tenantId }, bearer(account.accessToken));
  return { token: String(switched.body.accessToken), userId: account.user.id };
}
