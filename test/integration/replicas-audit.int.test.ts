import { z } from 'zod';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createKafka, type Admin } from '../../common/kafka';
import { describeGroup, topicBounds } from '../../common/kafka-groups';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { AuditIntake } from '../../services/audit/record-publisher';
import { verifyTenantChain } from '../../services/audit/verify';
import type { AuditDraft } from '../../services/audit/writer';
import { AUDIT_CONSUMER_JOINED } from '../../workers/audit/consumer';
import { AuditFallbackReplayer } from '../../workers/audit/fallback-replay';
import { startTestGateway, type TestGateway } from '../helpers/app';
import { createAuditDatabase, createTestTopic, eventually, quietLogger, type TestTopic } from '../helpers/audit';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { bearer, post, registerAccount, type RegisteredAccount } from '../helpers/identity';
import { copiesById, readTopicRange, spawnReplica, type LogLine, type ReplicaProcess } from '../helpers/replica-processes';

/**
 * The audit tier with two replicas (docs/decisions/audit.md, Consumer and fallback buffer): two
 * consumers in one group, each a process of its own (test/helpers/audit-consumer-entry.ts, assembled
 * as workers/audit-consumer.ts is), store every record the gateway answered 202 exactly once, also when
 * one of them is killed with chunks stored whose offsets it had not committed; and two fallback
 * replayers emptying one buffer at once send each record to Kafka once (the buffer's rows are claimed
 * with SKIP LOCKED: every consumer process runs a replayer, so this is a sweep on every replica).
 * audit-pipeline.int.test.ts covers one consumer and one replayer.
 */

jest.setTimeout(240_000);

const CHUNK_STORED = 'audit chunk stored';
const STALLED = 'stalled with a chunk stored and its offsets uncommitted';
const logger = quietLogger();

describe('two audit consumers in one group', () => {
  let topic: TestTopic;
  let gateway: TestGateway;
  let account: RegisteredAccount;
  let owner: DatabasePool;
  let app: DatabasePool;
  let admin: Admin;
  const replicas: ReplicaProcess[] = [];

  beforeAll(async () => {
    await migrateSharedDatabase();
    // Six partitions, three for each member.
    topic = await createTestTopic('replicas-audit', 6);
    [gateway, owner, app] = await Promise.all([
      // The gateway's direct intake goes to this file's topic; its own request records would join the count.
      startTestGateway({ env: { AUDIT_INTAKE_TOPIC: topic.name, AUDIT_REQUEST_ENABLED: 'false' } }),
      createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'replicas-audit-owner' }),
      createDbPool(appUrl(), { maxPoolSize: 2, name: 'replicas-audit-app' }),
    ]);
    account = await registerAccount(gateway);
    admin = topic.kafka.admin();
    await admin.connect();
  }, 60_000);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop('SIGKILL')));
    await admin?.disconnect();
    await gateway?.close();
    await topic?.drop();
    await Promise.all([owner?.end(), app?.end()]);
  });

  function startConsumer(groupId: string, mode: 'stall' | 'run'): ReplicaProcess {
    const replica = spawnReplica('test/helpers/audit-consumer-entry.ts', [topic.name, groupId, mode]);
    replicas.push(replica);
    return replica;
  }

  /** 200 records in ten batches of 20, each answered 202; their ids. Entities vary, so the records spread over the partitions. */
  async function writeRecords(from: number): Promise<string[]> {
    const ids: string[] = [];
    for (let request = 0; request < 10; request += 1) {
      const records = Array.from({ length: 20 }, (_, i) => {
        const n = from + request * 20 + i;
        return { action: 'crm.contact.updated', entityType: 'contact', entityId: `c-${n}`, after: { n } };
      });
      const response = await post(gateway, '/audit/records/batch', { records }, bearer(account.accessToken));
      expect(response.status).toBe(202);
      ids.push(...(response.body.data as Array<{ auditId: string }>).map((accepted) => accepted.auditId));
    }
    return ids;
  }

  const copiesStored = (ids: readonly string[]) => owner.any(sql.type(z.object({ id: z.string(), copies: z.number() }))`
    SELECT id::text AS id, count(*)::int AS copies FROM audit_records WHERE id = ANY(${sql.array(ids, 'uuid')}) GROUP BY id
  `);

  const assignmentOf = (line: LogLine | undefined): number[] => ((line?.assignment ?? {}) as Record<string, number[]>)[topic.name] ?? [];

  it('stores every record answered 202 exactly once, also when one consumer is killed with chunks stored and their offsets uncommitted', async () => {
    const groupId = `test.audit-replicas.${newId()}`;
    const stalling = startConsumer(groupId, 'stall');
    await stalling.log.waitForMessage(AUDIT_CONSUMER_JOINED);
    const survivor = startConsumer(groupId, 'run');
    // Both members hold partitions: the group has settled with two members, and each logged its share.
    await eventually(async () => {
      const { state, members } = await describeGroup(admin, groupId);
      const shares = [stalling, survivor].map((replica) => assignmentOf(replica.log.all(AUDIT_CONSUMER_JOINED).at(-1)));
      return state === 'Stable' && members === 2 && stalling.log.all(AUDIT_CONSUMER_JOINED).length >= 2
        && shares.every((share) => share.length > 0) && new Set(shares.flat()).size === 6 && shares.flat().length === 6;
    }, 'two members sharing the six partitions', 60_000);

    const accepted = await writeRecords(0);
    // One member stops with chunks committed in the store and their offsets not committed, and dies there.
    await stalling.log.waitForMessage(STALLED);
    expect(await stalling.stop('SIGKILL')).toBe('SIGKILL');
    accepted.push(...await writeRecords(200));

    // The survivor takes the dead member's partitions once the group gives up on it (Kafka's session timeout).
    await eventually(async () => (await copiesStored(accepted)).length === accepted.length, 'every accepted record stored', 150_000);
    const stored = await copiesStored(accepted);
    expect(stored.filter(({ copies }) => copies !== 1)).toEqual([]);
    expect(new Set(stored.map(({ id }) => id))).toEqual(new Set(accepted));
    // It read the dead member's uncommitted chunks again and dropped what was already stored.
    const dropped = survivor.log.all(CHUNK_STORED).reduce((sum, line) => sum + Number(line.duplicates), 0);
    expect(dropped).toBeGreaterThan(0);
    // And the tenant's chain has no gap and no repeat.
    expect(await verifyTenantChain(app, account.tenant.id)).toMatchObject({ ok: true, tenantId: account.tenant.id });

    expect(await survivor.stop('SIGTERM')).toBe(0);
  });
});

describe('two fallback replayers on one buffer', () => {
  const draftOf = (tenantId: string, n: number): AuditDraft => ({
    tenantId, source: 'jest', action: 'billing.subscription.updated', entityType: 'subscription', entityId: `sub-${n % 7}`,
    actorId: null, actorIp: null, actorUserAgent: null, before: null, after: { n }, meta: { n }, traceId: null,
  });

  it('sends every buffered record to Kafka exactly once when two replicas replay at the same time', async () => {
    const scratch = await createAuditDatabase('platform_replicas_replay_test');
    const topic = await createTestTopic('replicas-replay', 3);
    const pools: DatabasePool[] = [];
    const replayers: AuditFallbackReplayer[] = [];
    try {
      const tenantId = newId();
      // Kafka unreachable: the intake buffers every record (the path a broker outage takes).
      const down = new AuditIntake({
        kafka: createKafka({ ...config().kafka, brokers: ['127.0.0.1:1'], clientId: 'audit-intake-down' }), bufferDb: scratch.app, logger,
        settings: { publishTimeoutMs: 2000, kafkaRetryMs: 60_000 }, topic: topic.name,
      });
      const accepted: string[] = [];
      try {
        for (let batch = 0; batch < 3; batch += 1) {
          const answers = await down.publishAuditRecords(Array.from({ length: 100 }, (_, n) => draftOf(tenantId, batch * 100 + n)));
          accepted.push(...answers.map((answer) => answer.auditId));
        }
      } finally {
        await down.close();
      }
      const buffered = () => scratch.owner.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM audit_fallback_buffer`);
      expect(await buffered()).toBe(300);

      // Two replicas, each with its own pool and producer, as two consumer processes have; small batches, so they interleave.
      for (let replica = 0; replica < 2; replica += 1) {
        const pool = await createDbPool(scratch.ownerUrl, { maxPoolSize: 2, name: `replicas-replay-${replica}` });
        pools.push(pool);
        replayers.push(new AuditFallbackReplayer({
          pool, kafka: createKafka(config().kafka), logger, topic: topic.name, settings: { intervalMs: 30_000, batchSize: 10, alarmAfterDays: 7 },
        }));
      }
      const admin = topic.kafka.admin();
      await admin.connect();
      try {
        const from = await topicBounds(admin, topic.name);
        const sent = await Promise.all(replayers.map((replayer) => replayer.replayOnce()));
        expect(sent[0] + sent[1]).toBe(300);
        expect(await buffered()).toBe(0);

        const events = await readTopicRange({ kafka: topic.kafka, topic: topic.name, from, to: await topicBounds(admin, topic.name) });
        const copies = copiesById(events.map((event) => event.envelope.id));
        expect(new Set(copies.keys())).toEqual(new Set(accepted));
        expect([...copies].filter(([, n]) => n !== 1)).toEqual([]);
      } finally {
        await admin.disconnect();
      }
    } finally {
      for (const replayer of replayers) {
        replayer.stop();
        await replayer.run(); // returns at once, closing its producer
      }
      await Promise.all(pools.map((pool) => pool.end()));
      await topic.drop();
      await scratch.close();
    }
  });
});
