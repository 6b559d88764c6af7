import { newId } from '../../common/ids';
import { committedOffsets, topicBounds } from '../../common/kafka-groups';
import { GroupConsumer, type Delivery, type ForwardingHandler } from '../../services/events/consumers/group-consumer';
import { kafkaGroupId } from '../../services/events/consumers/group-names';
import { TopicTail } from '../../services/events/consumers/topic-tail';
import { createAuditDatabase, createTestTopic, eventually, quietLogger, type AuditDatabase, type TestTopic } from '../helpers/audit';
import {
  expectExactlyOnceInOrder, publish, recordOf, testConsumerSettings, testEvents, type EffectRow, type TestEvent,
} from '../helpers/consumer-groups';

/**
 * Tenant streams that follow the gateway's tail of their topic (services/events/consumers/topic-tail.ts
 * and tail-follower.ts) instead of each fetching the whole topic, against real Kafka and PostgreSQL:
 * what each receives, what its group commits, and that nothing is lost or doubled when a stream lets
 * go of the tail (it fell behind, or the tail stopped) and fetches for itself again.
 */

jest.setTimeout(120_000);

const logger = quietLogger();
let db: AuditDatabase;
let topic: TestTopic;
const running: Array<{ stop(): Promise<void> }> = [];

beforeAll(async () => {
  db = await createAuditDatabase('platform_consumer_groups_test');
  topic = await createTestTopic('tail', 3);
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((member) => member.stop()));
});

afterAll(async () => {
  await topic?.drop();
  await db?.close();
});

/** A stream's handler: what it received, optionally slowly. */
const stream = (pauseMs = 0): ForwardingHandler & { received: Delivery[] } => {
  const received: Delivery[] = [];
  return {
    kind: 'forwarding', received,
    handle: async (delivery) => {
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      received.push(delivery);
    },
  };
};

async function startedTail(): Promise<TopicTail> {
  const tail = new TopicTail(topic.kafka, topic.name, logger);
  await tail.start((error) => { throw error; });
  running.push(tail);
  return tail;
}

/** A tenant stream's group member; the topic is the file's, so it starts from the beginning and skips earlier tests' tenants. */
async function member(
  tail: TopicTail, tenantId: string, handler: ForwardingHandler, tailMaxWaiting?: number, groupId = kafkaGroupId(`test.tail-${newId().slice(-8)}`, tenantId),
): Promise<GroupConsumer & { groupId: string }> {
  const consumer = new GroupConsumer({
    kafka: topic.kafka, db: db.app, logger, topic: topic.name, tenantId, groupId,
    accepts: () => true, handler, fromBeginning: true, settings: testConsumerSettings, tail, tailMaxWaiting,
  });
  await consumer.start();
  running.unshift(consumer);
  return Object.assign(consumer, { groupId });
}

const effectsOf = (deliveries: readonly Delivery[]): EffectRow[] => deliveries.map(({ event }) => ({
  tenantId: event.envelope.tenantId, txTenant: null, eventId: event.envelope.id, eventKey: event.key, n: (event.envelope.data as { n: number }).n,
}));

const ofTenant = (events: readonly TestEvent[], tenantId: string) => events.filter((event) => event.envelope.tenantId === tenantId);

/** Publishes rounds of events of the tenants until every member follows the tail on every partition; returns what it published. */
async function untilFollowing(tenants: readonly string[], members: readonly GroupConsumer[]): Promise<TestEvent[]> {
  const published: TestEvent[] = [];
  await eventually(async () => {
    const round = testEvents(tenants, 3, 2);
    await publish(topic.kafka, round.map((event) => recordOf(topic.name, event)));
    published.push(...round);
    await new Promise((resolve) => setTimeout(resolve, 300));
    return members.every((consumer) => consumer.followedPartitions().length === 3);
  }, 'every stream following the tail on every partition', 60_000);
  return published;
}

describe('streams on the topic tail', () => {
  it('hand each stream its tenant’s events only, exactly once and in order, and commit its group past the others’', async () => {
    const tail = await startedTail();
    const [a, b, other] = [newId(), newId(), newId()];
    const [streamA, streamB] = [stream(), stream()];
    const [memberA, memberB] = [await member(tail, a, streamA), await member(tail, b, streamB)];
    const warmUp = await untilFollowing([a, b, other], [memberA, memberB]);
    expect(tail.followers()).toBe(6);

    const events = testEvents([a, b, other], 4, 25);
    await publish(topic.kafka, events.map((event) => recordOf(topic.name, event)));
    const all = [...warmUp, ...events];
    await eventually(async () => streamA.received.length >= ofTenant(all, a).length && streamB.received.length >= ofTenant(all, b).length, 'both streams’ events');

    await new Promise((resolve) => setTimeout(resolve, 500));
    expectExactlyOnceInOrder(effectsOf(streamA.received), ofTenant(all, a));
    expectExactlyOnceInOrder(effectsOf(streamB.received), ofTenant(all, b));
    expect(memberA.followedPartitions()).toEqual([0, 1, 2]);

    // The other tenant's events were passed over on the tail, and the groups committed past them.
    const admin = topic.kafka.admin();
    await admin.connect();
    try {
      const ends = await topicBounds(admin, topic.name);
      for (const consumer of [memberA, memberB]) {
        await eventually(async () => {
          const committed = await committedOffsets(admin, consumer.groupId, topic.name);
          return ends.every(({ partition, high }) => committed.find((entry) => entry.partition === partition)?.offset === high);
        }, `group ${consumer.groupId} committed up to the end of the topic`);
      }
    } finally {
      await admin.disconnect();
    }
  });

  it('lets a stream that falls behind go back to its own fetch, losing and doubling nothing', async () => {
    const tail = await startedTail();
    const tenantId = newId();
    const slow = stream(15);
    const consumer = await member(tail, tenantId, slow, 5);
    const warmUp = await untilFollowing([tenantId], [consumer]);

    // Far more than five waiting: the partitions let go of the tail and are fetched again from where they were.
    const events = testEvents([tenantId], 3, 40);
    await publish(topic.kafka, events.map((event) => recordOf(topic.name, event)));
    await eventually(async () => consumer.followedPartitions().length < 3, 'a partition letting go of the tail');
    const all = [...warmUp, ...events];
    await eventually(async () => slow.received.length >= all.length, 'every event', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expectExactlyOnceInOrder(effectsOf(slow.received), all);
  });

  it('hands a rebalanced group’s partitions back to Kafka: the members split them and follow their own, and each event is delivered once', async () => {
    const tail = await startedTail();
    const tenantId = newId();
    const [first, second] = [stream(), stream()];
    const one = await member(tail, tenantId, first);
    const warmUp = await untilFollowing([tenantId], [one]);

    const two = await member(tail, tenantId, second, undefined, one.groupId);
    const all = [...warmUp];
    await eventually(async () => {
      const round = testEvents([tenantId], 3, 2);
      await publish(topic.kafka, round.map((event) => recordOf(topic.name, event)));
      all.push(...round);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const followed = [...one.followedPartitions(), ...two.followedPartitions()].sort();
      return two.followedPartitions().length > 0 && one.followedPartitions().length > 0 && followed.join() === '0,1,2';
    }, 'both members following the partitions they were given', 60_000);

    const events = testEvents([tenantId], 3, 20);
    await publish(topic.kafka, events.map((event) => recordOf(topic.name, event)));
    all.push(...events);
    const received = () => [...first.received, ...second.received];
    await eventually(async () => new Set(received().map((delivery) => delivery.event.envelope.id)).size >= all.length, 'every event');
    await new Promise((resolve) => setTimeout(resolve, 500));
    // After the rebalance each event reached one member once; before it, the first member had them all.
    const later = new Set(events.map((event) => event.envelope.id));
    expectExactlyOnceInOrder(effectsOf(received().filter((delivery) => later.has(delivery.event.envelope.id))), events);
    expect(new Set(received().map((delivery) => delivery.event.envelope.id))).toEqual(new Set(all.map((event) => event.envelope.id)));
  });

  it('lets its followers go when it stops: they fetch for themselves from where they were', async () => {
    const tail = await startedTail();
    const tenantId = newId();
    const handler = stream();
    const consumer = await member(tail, tenantId, handler);
    const warmUp = await untilFollowing([tenantId], [consumer]);

    await tail.stop();
    await eventually(async () => consumer.followedPartitions().length === 0, 'no partition following the stopped tail');
    const events = testEvents([tenantId], 3, 10);
    await publish(topic.kafka, events.map((event) => recordOf(topic.name, event)));
    const all = [...warmUp, ...events];
    await eventually(async () => handler.received.length >= all.length, 'every event');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expectExactlyOnceInOrder(effectsOf(handler.received), all);
  });
});
