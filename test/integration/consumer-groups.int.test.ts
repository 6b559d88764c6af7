import { newId } from '../../common/ids';
import { committedOffsets } from '../../common/kafka-groups';
import { DeliveryAborted } from '../../services/events/consumers/delivery-rules';
import {
  GroupConsumer, type Delivery, type DeliveryHandler, type ForwardingHandler, type GroupConsumerOptions,
} from '../../services/events/consumers/group-consumer';
import { kafkaGroupId } from '../../services/events/consumers/group-names';
import { createAuditDatabase, createTestTopic, eventually, quietLogger, type AuditDatabase, type TestTopic } from '../helpers/audit';
import {
  createEffectsTable, deadLettersOf, effectsOf, expectExactlyOnceInOrder, publish, receiptCount, recordOf, redeliveryOf,
  testConsumerSettings, testEvent, testEvents, writeEffect, type TestEvent,
} from '../helpers/consumer-groups';

/**
 * The delivery pipeline of consumer groups (services/events/consumers/group-consumer.ts) against
 * real Kafka and PostgreSQL: tenant subscriptions and platform groups on one topic, de-duplication,
 * dead letters that do not block their partition, and a dead letter's redelivery. A scratch
 * database (receipts, dead letters and the test's effects) and topics of the file's own.
 */

jest.setTimeout(120_000);

const logger = quietLogger();
let db: AuditDatabase;
const running: GroupConsumer[] = [];
const topics: TestTopic[] = [];

beforeAll(async () => {
  db = await createAuditDatabase('platform_consumer_groups_test');
  await createEffectsTable(db.owner);
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((consumer) => consumer.stop()));
});

afterAll(async () => {
  await Promise.all(topics.map((topic) => topic.drop()));
  await db?.close();
});

async function topicOf(partitions: number): Promise<TestTopic> {
  const topic = await createTestTopic('consumers', partitions);
  topics.push(topic);
  return topic;
}

type Options = Partial<GroupConsumerOptions> & Pick<GroupConsumerOptions, 'groupId' | 'handler'>;

async function started(topic: TestTopic, options: Options): Promise<GroupConsumer> {
  const consumer = new GroupConsumer({
    kafka: topic.kafka, db: db.app, logger, topic: topic.name, tenantId: null, accepts: () => true, fromBeginning: true,
    settings: testConsumerSettings, partitionsConcurrently: 3, ...options,
  });
  await consumer.start();
  running.push(consumer);
  return consumer;
}

/** A transactional handler writing each delivery's effect in the receipt's transaction. */
const effects = (groupId: string, fail?: (delivery: Delivery) => boolean): DeliveryHandler & { calls: Delivery[] } => {
  const calls: Delivery[] = [];
  return {
    kind: 'transactional', calls,
    handle: async (delivery, tx) => {
      calls.push(delivery);
      await writeEffect(tx, groupId, delivery);
      if (fail?.(delivery)) throw new Error(`handler refused event ${delivery.event.envelope.id}`);
    },
  };
};

/** A forwarding handler (as a Subscribe stream is): it collects what it receives. */
const collector = (): DeliveryHandler & { received: Delivery[] } => {
  const received: Delivery[] = [];
  return { kind: 'forwarding', received, handle: async (delivery) => { received.push(delivery); } };
};

const idsOf = (events: readonly TestEvent[]) => events.map((event) => event.envelope.id).sort();

describe('tenants on one topic', () => {
  it('gives a tenant subscription only its tenant\'s events, and a platform group every event in its own tenant\'s transaction', async () => {
    const topic = await topicOf(3);
    const [a, b] = [newId(), newId()];
    const events = testEvents([a, b], 3, 10);
    await publish(topic.kafka, events.map((event) => recordOf(topic.name, event)));

    const streamA = collector();
    const streamB = collector();
    const platformGroup = `test.platform-${newId().slice(-8)}`;
    const platform = effects(platformGroup);
    await Promise.all([
      started(topic, { groupId: kafkaGroupId('crm.feed', a), tenantId: a, handler: streamA }),
      started(topic, { groupId: kafkaGroupId('crm.feed', b), tenantId: b, handler: streamB }),
      started(topic, { groupId: platformGroup, handler: platform }),
    ]);

    const ofTenant = (tenantId: string) => events.filter((event) => event.envelope.tenantId === tenantId);
    // A forwarding handler's receipt is claimed after the handler resolved: wait for the receipts too.
    await eventually(async () => streamA.received.length >= 30 && streamB.received.length >= 30
      && (await effectsOf(db.owner, platformGroup)).length >= 60
      && await receiptCount(db.owner, kafkaGroupId('crm.feed', a)) >= 30, 'every delivery and its receipt');
    expect(streamA.received.map((delivery) => delivery.event.envelope.id).sort()).toEqual(idsOf(ofTenant(a)));
    expect(streamB.received.map((delivery) => delivery.event.envelope.id).sort()).toEqual(idsOf(ofTenant(b)));
    const platformEffects = await effectsOf(db.owner, platformGroup);
    expectExactlyOnceInOrder(platformEffects, events);
    expect(platformEffects.every((effect) => effect.txTenant === effect.tenantId)).toBe(true);
    // Receipts are kept per Kafka group id: a tenant's subscription and the platform group apart.
    expect(await receiptCount(db.owner, kafkaGroupId('crm.feed', a))).toBe(30);
    expect(await receiptCount(db.owner, platformGroup)).toBe(60);
  });

  it('hands an event id seen before to no handler again, a redelivery for another group neither', async () => {
    const topic = await topicOf(1);
    const tenantId = newId();
    const event = testEvent(tenantId, newId(), 1);
    const groupId = `test.dedup-${newId().slice(-8)}`;
    const handler = effects(groupId);
    const consumer = await started(topic, { groupId, handler });
    const last = testEvent(tenantId, event.key, 2);
    await publish(topic.kafka, [recordOf(topic.name, event), recordOf(topic.name, event), redeliveryOf(topic.name, event, 'test.other-group'), recordOf(topic.name, last)]);
    await eventually(async () => (await effectsOf(db.owner, groupId)).length >= 2, 'both events');
    expectExactlyOnceInOrder(await effectsOf(db.owner, groupId), [event, last]);
    expect(consumer.status()).toMatchObject({ handled: 2, duplicate: 1, skipped: 1 });
  });

  it('skips the events of tenants a group does not serve, without a transaction or a receipt, asking once per batch; their redeliveries are handled', async () => {
    const topic = await topicOf(1);
    const [served, unserved] = [newId(), newId()];
    const events = testEvents([served, unserved], 2, 5);
    const groupId = `test.served-${newId().slice(-8)}`;
    const handler = effects(groupId);
    const asked: string[][] = [];
    const consumer = await started(topic, {
      groupId, handler, tenantsServed: async (tenantIds) => {
        asked.push([...tenantIds]);
        return new Set(tenantIds.filter((tenantId) => tenantId === served));
      },
    });
    const redelivered = testEvent(unserved, newId(), 1);
    await publish(topic.kafka, [...events.map((event) => recordOf(topic.name, event)), redeliveryOf(topic.name, redelivered, groupId)]);
    await eventually(async () => (await effectsOf(db.owner, groupId)).length >= 11, 'the served tenant\'s events and the redelivery');
    expectExactlyOnceInOrder(await effectsOf(db.owner, groupId), [...events.filter((event) => event.envelope.tenantId === served), redelivered]);
    expect(await receiptCount(db.owner, groupId)).toBe(11);
    expect(consumer.status()).toMatchObject({ handled: 11, skipped: 10 });
    // Each batch asks once, for its tenants (the redelivery's is not asked about).
    expect(asked.every((tenantIds) => new Set(tenantIds).size === tenantIds.length)).toBe(true);
    expect(asked.flat().length).toBeLessThan(events.length);
  });
});

describe('dead letters', () => {
  it('dead-letters an event after maxAttempts failures and goes on with the partition', async () => {
    const topic = await topicOf(1);
    const tenantId = newId();
    const key = newId();
    const events = [1, 2, 3, 4, 5].map((n) => testEvent(tenantId, key, n));
    const poison = events[1];
    const groupId = `test.dlq-${newId().slice(-8)}`;
    const handler = effects(groupId, (delivery) => delivery.event.envelope.id === poison.envelope.id);
    const consumer = await started(topic, { groupId, handler });
    await publish(topic.kafka, events.map((event) => recordOf(topic.name, event)));

    // The consumer counts an outcome once its transaction committed: wait for the count, not the effects alone.
    await eventually(async () => consumer.status().handled === 4, 'the events after the dead letter');
    // The failed attempts rolled their effects back: only the four others took effect, in order.
    expectExactlyOnceInOrder(await effectsOf(db.owner, groupId), events.filter((event) => event !== poison));
    expect(handler.calls.filter((call) => call.event.envelope.id === poison.envelope.id).map((call) => call.attempt)).toEqual([1, 2, 3]);
    const letters = await deadLettersOf(db.owner, groupId);
    expect(letters).toEqual([expect.objectContaining({
      consumerGroup: groupId, topic: topic.name, partition: 0, offset: '1', eventKey: key, eventId: poison.envelope.id, eventType: 'test.item.changed',
      envelope: poison.envelope, attemptCount: 3, status: 'pending', timesDeadLettered: 1, quarantined: false, resolvedAt: null,
      lastError: `Error: handler refused event ${poison.envelope.id}`,
    })]);
    expect(consumer.status()).toMatchObject({ handled: 4, 'dead-lettered': 1 });
    // No receipt for it: a redelivery must be able to handle it.
    expect(await receiptCount(db.owner, groupId)).toBe(4);
  });

  it('handles a redelivery in its own group only, resolves the dead letter, and leaves an undirected copy to the dead-letter tools', async () => {
    const topic = await topicOf(2);
    const tenantId = newId();
    const event = testEvent(tenantId, newId(), 1);
    const failing = `test.failing-${newId().slice(-8)}`;
    const healthy = `test.healthy-${newId().slice(-8)}`;
    let broken = true;
    const failingHandler = effects(failing, () => broken);
    const healthyHandler = effects(healthy);
    const [failingConsumer, healthyConsumer] = await Promise.all([
      started(topic, { groupId: failing, handler: failingHandler }),
      started(topic, { groupId: healthy, handler: healthyHandler }),
    ]);
    await publish(topic.kafka, [recordOf(topic.name, event)]);
    await eventually(async () => (await deadLettersOf(db.owner, failing)).length === 1 && (await effectsOf(db.owner, healthy)).length === 1, 'the dead letter');

    // The same event again without a redelivery header (a duplicate publish): left to the dead-letter tools.
    await publish(topic.kafka, [recordOf(topic.name, event)]);
    await eventually(async () => failingConsumer.status()['left-dead-lettered'] === 1, 'the duplicate left alone');
    expect((await deadLettersOf(db.owner, failing))[0]).toMatchObject({ status: 'pending', timesDeadLettered: 1 });

    // A redelivery that fails again: dead-lettered once more, back to pending.
    await publish(topic.kafka, [redeliveryOf(topic.name, event, failing)]);
    await eventually(async () => (await deadLettersOf(db.owner, failing))[0].timesDeadLettered === 2, 'the second dead-lettering');

    broken = false;
    await publish(topic.kafka, [redeliveryOf(topic.name, event, failing)]);
    await eventually(async () => (await deadLettersOf(db.owner, failing))[0].status === 'resolved', 'the resolved dead letter');
    expect((await deadLettersOf(db.owner, failing))[0]).toMatchObject({ status: 'resolved', timesDeadLettered: 2, resolvedAt: expect.any(String) });
    expect(await effectsOf(db.owner, failing)).toEqual([expect.objectContaining({ eventId: event.envelope.id })]);
    expect(failingConsumer.status()).toMatchObject({ resolved: 1, 'dead-lettered': 2 });
    // The healthy group handled the event once and skipped every redelivery (they were not for it).
    expect(await effectsOf(db.owner, healthy)).toHaveLength(1);
    expect(healthyConsumer.status()).toMatchObject({ handled: 1, duplicate: 1, skipped: 2 });
    expect(healthyHandler.calls).toHaveLength(1);
  });

  it('dead-letters a forwarding handler\'s event after its failures, and claims its receipt only when it was forwarded', async () => {
    const topic = await topicOf(1);
    const tenantId = newId();
    const events = [1, 2, 3].map((n) => testEvent(tenantId, newId(), n));
    const groupId = kafkaGroupId('crm.feed', tenantId);
    const received: string[] = [];
    const consumer = await started(topic, {
      groupId, tenantId,
      handler: {
        kind: 'forwarding',
        handle: async ({ event }: Delivery) => {
          if (event.envelope.id === events[0].envelope.id) throw new Error('the client refused it');
          received.push(event.envelope.id);
        },
      },
    });
    await publish(topic.kafka, events.map((event) => recordOf(topic.name, event)));
    // Its receipt is claimed after the handler resolved: wait for the consumer's count of it.
    await eventually(async () => consumer.status().handled === 2, 'the other events');
    expect(received).toEqual([events[1].envelope.id, events[2].envelope.id]);
    expect(await deadLettersOf(db.owner, groupId)).toEqual([expect.objectContaining({ eventId: events[0].envelope.id, attemptCount: 3 })]);
    expect(await receiptCount(db.owner, groupId)).toBe(2);
    expect(consumer.status()).toMatchObject({ handled: 2, 'dead-lettered': 1 });
  });

  it('forwards an event that comes twice in one batch once, and a redelivery forwarded resolves its dead letter', async () => {
    const topic = await topicOf(1);
    const tenantId = newId();
    const [first, second] = [1, 2].map((n) => testEvent(tenantId, newId(), n));
    const groupId = kafkaGroupId('crm.feed', tenantId);
    let refusing = true;
    const received: string[] = [];
    const handler: ForwardingHandler = {
      kind: 'forwarding',
      handle: async ({ event }) => {
        if (refusing && event.envelope.id === second.envelope.id) throw new Error('the client refused it');
        received.push(event.envelope.id);
      },
    };
    // Published before the consumer joins, so the three arrive in one fetch: the batch's receipts are
    // read before the first is forwarded, and the second copy is known as forwarded all the same.
    await publish(topic.kafka, [recordOf(topic.name, first), recordOf(topic.name, first), recordOf(topic.name, second)]);
    const consumer = await started(topic, { groupId, tenantId, handler });
    await eventually(async () => consumer.status().handled === 1 && consumer.status()['dead-lettered'] === 1, 'the batch settled');
    expect(received).toEqual([first.envelope.id]);
    expect(consumer.status()).toMatchObject({ handled: 1, duplicate: 1, 'dead-lettered': 1 });
    expect(await receiptCount(db.owner, groupId)).toBe(1);

    refusing = false;
    await publish(topic.kafka, [redeliveryOf(topic.name, second, groupId), redeliveryOf(topic.name, second, groupId), recordOf(topic.name, first)]);
    await eventually(async () => consumer.status().duplicate === 3, 'the redeliveries and the duplicate');
    expect(received).toEqual([first.envelope.id, second.envelope.id]);
    expect(consumer.status()).toMatchObject({ handled: 1, resolved: 1, duplicate: 3, 'dead-lettered': 1 });
    expect(await deadLettersOf(db.owner, groupId)).toEqual([expect.objectContaining({ eventId: second.envelope.id, status: 'resolved' })]);
    expect(await receiptCount(db.owner, groupId)).toBe(2);
  });
});

describe('committing', () => {
  it('commits batches of only skipped messages at most once per skippedCommitIntervalMs, and handled ones at once', async () => {
    const topic = await topicOf(1);
    const [tenantId, other] = [newId(), newId()];
    const groupId = kafkaGroupId('crm.feed', tenantId);
    const stream = collector();
    const member = await started(topic, { groupId, tenantId, handler: stream, skippedCommitIntervalMs: 600_000 });
    const admin = topic.kafka.admin();
    await admin.connect();
    try {
      const committed = async () => (await committedOffsets(admin, groupId, topic.name)).map(({ offset }) => Number(offset));

      // The first batch commits (nothing was committed before); later batches of other tenants' events do not.
      await publish(topic.kafka, testEvents([other], 1, 3).map((event) => recordOf(topic.name, event)));
      await eventually(async () => member.status().skipped >= 3 && (await committed()).length > 0, 'the first batch skipped and committed');
      const first = (await committed())[0];
      await publish(topic.kafka, testEvents([other], 1, 4).map((event) => recordOf(topic.name, event)));
      await eventually(async () => member.status().skipped >= 7, 'four more skipped');
      expect(await committed()).toEqual([first]);

      // An event of the stream's tenant is handled and committed with everything before it.
      await publish(topic.kafka, [recordOf(topic.name, testEvent(tenantId, 'k', 1))]);
      await eventually(async () => (await committed())[0] === 8, 'the handled event committed');
      expect(stream.received).toHaveLength(1);

      // Skipped again and not committed, not even by a member that leaves between batches: the next
      // member reads them again and skips them again, and receives nothing twice.
      await publish(topic.kafka, testEvents([other], 1, 2).map((event) => recordOf(topic.name, event)));
      await eventually(async () => member.status().skipped >= 9, 'two more skipped');
      expect(await committed()).toEqual([8]);
      await member.stop();
      expect(await committed()).toEqual([8]);
      const next = await started(topic, { groupId, tenantId, handler: stream });
      await eventually(async () => next.status().skipped >= 2 && (await committed())[0] === 10, 'the next member skipped them and committed');
      expect(stream.received).toHaveLength(1);
    } finally {
      await admin.disconnect();
    }
  });
});

describe('stopping', () => {
  it('lets a member stopped in the middle of a batch finish the delivery in hand and commit it, leaving the rest to the next', async () => {
    const topic = await topicOf(1);
    const events = testEvents([newId()], 1, 20);
    const groupId = `test.stop-${newId().slice(-8)}`;
    await publish(topic.kafka, events.map((event) => recordOf(topic.name, event)));
    // The fifth delivery waits, its effect written in its open transaction, until the member has been
    // told to stop: the stop lands in the middle of the batch with that delivery in hand, however fast the machine.
    const inHandAt = 5;
    let deliveries = 0;
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => { release = resolve; });
    const stalling: DeliveryHandler = {
      kind: 'transactional',
      handle: async (delivery, tx) => {
        await writeEffect(tx, groupId, delivery);
        deliveries += 1;
        if (deliveries === inHandAt) await released;
      },
    };
    const first = await started(topic, { groupId, handler: stalling, commitEvery: 100_000 });
    await eventually(async () => deliveries >= inHandAt, 'the fifth delivery in hand');
    const stopping = first.stop();
    release();
    await stopping;
    await expect(first.whenStopped()).resolves.toBeNull();
    // The delivery in hand was finished and nothing after it was started.
    const handledFirst = first.status().handled;
    expect(handledFirst).toBe(inHandAt);
    expect(await effectsOf(db.owner, groupId)).toHaveLength(inHandAt);

    const next = await started(topic, { groupId, handler: effects(groupId) });
    await eventually(async () => (await effectsOf(db.owner, groupId)).length >= events.length, 'the rest');
    expectExactlyOnceInOrder(await effectsOf(db.owner, groupId), events);
    // The stopped member committed what it handled: nothing is read twice.
    expect(next.status()).toMatchObject({ handled: events.length - handledFirst, duplicate: 0 });
  });

  it('stops a member whose forwarding handler lost its destination, leaving that event uncommitted for the next member', async () => {
    const topic = await topicOf(1);
    const tenantId = newId();
    const events = testEvents([tenantId], 1, 5);
    const groupId = kafkaGroupId('crm.feed', tenantId);
    await publish(topic.kafka, events.map((event) => recordOf(topic.name, event)));
    const forwarded: string[] = [];
    const closing = await started(topic, {
      groupId, tenantId,
      handler: {
        kind: 'forwarding',
        handle: async ({ event }: Delivery) => {
          if (event.envelope.id === events[2].envelope.id) throw new DeliveryAborted('the stream was closed');
          forwarded.push(event.envelope.id);
        },
      },
    });
    await expect(closing.whenStopped()).resolves.toBeNull();
    expect(forwarded).toEqual(events.slice(0, 2).map((event) => event.envelope.id));

    const stream = collector();
    const next = await started(topic, { groupId, tenantId, handler: stream });
    // A forwarded delivery is counted when its batch settles (its receipt claimed), after the handler resolved.
    await eventually(async () => stream.received.length >= 3 && next.status().handled >= 3, 'the rest, settled');
    expect(stream.received.map((delivery) => delivery.event.envelope.id)).toEqual(events.slice(2).map((event) => event.envelope.id));
    expect(next.status()).toMatchObject({ handled: 3, duplicate: 0, 'dead-lettered': 0 });
  });
});
