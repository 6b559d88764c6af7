import pino from 'pino';
import { createKafka, type Consumer, type KafkaMessage } from '../../../common/kafka';
import { PartitionBatches, type PartitionMessage } from '../../../common/message-consumer';
import { EVENT_HEADERS } from '../../../services/events/envelope';
import { TailFollower } from '../../../services/events/consumers/tail-follower';
import { TopicTail } from '../../../services/events/consumers/topic-tail';

/**
 * A stream's partition following the topic tail (services/events/consumers/tail-follower.ts), without
 * a broker: the tail is fed as its consumer would feed it, and the member's consumer is a recorder of
 * the calls the follower makes on it (commits, and the seek and resume that give the partition back).
 */

const A = '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a12';
const B = '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a99';
const logger = pino({ level: 'silent' });

const message = (offset: number, tenantId = A): KafkaMessage => ({
  offset: String(offset), key: null, value: Buffer.from('{}'), timestamp: '0', attributes: 0,
  headers: { [EVENT_HEADERS.tenantId]: Buffer.from(tenantId) },
});

/** The member's consumer: what the follower asked of it. */
function memberConsumer() {
  const calls: string[] = [];
  const consumer = {
    commitOffsets: (offsets: Array<{ partition: number; offset: string }>) => {
      calls.push(`commit ${offsets.map(({ partition, offset }) => `${partition}@${offset}`).join()}`);
      return Promise.resolve();
    },
    seek: ({ partition, offset }: { partition: number; offset: string }) => { calls.push(`seek ${partition}@${offset}`); },
    resume: (topics: Array<{ partitions: number[] }>) => { calls.push(`resume ${topics[0].partitions.join()}`); },
  };
  return { calls, consumer: consumer as unknown as Consumer };
}

/** Batch handling that records each batch's offsets, optionally waiting on `gate` or failing. */
function handling(options: { gate?: Promise<void>; fail?: (offsets: string[]) => boolean } = {}) {
  const handled: string[][] = [];
  const batches = new PartitionBatches<string[]>({
    commitEvery: 100,
    openBatch: async (messages: readonly PartitionMessage[]) => {
      const offsets = messages.map(({ message }) => message.offset);
      if (options.fail?.(offsets)) throw new Error('the batch failed');
      await options.gate;
      handled.push(offsets);
      return offsets;
    },
    handle: () => Promise.resolve('handled' as const),
    settleBatch: () => Promise.resolve(),
  });
  return { handled, batches };
}

const tailWith = (...messages: KafkaMessage[]) => {
  const tail = new TopicTail(createKafka({ brokers: ['127.0.0.1:1'], clientId: 'unit', ssl: false, sasl: {} }), 'test.topic', logger);
  tail.received(0, messages);
  return tail;
};

const flush = () => new Promise((resolve) => setImmediate(resolve));

it('hands the tail’s batches to the member’s batch handling in order, those that came meanwhile as one, and commits through its consumer', async () => {
  const tail = tailWith(message(0));
  const { calls, consumer } = memberConsumer();
  let open!: () => void;
  const { handled, batches } = handling({ gate: new Promise((resolve) => { open = resolve; }) });
  const follower = TailFollower.start({ tail, consumer, batches, topic: 'test.topic', partition: 0, tenantId: A, from: '1', running: () => true, logger })!;
  tail.received(0, [message(1), message(2, B)]);
  tail.received(0, [message(3)]);
  tail.received(0, [message(4, B), message(5)]);
  open();
  await flush();
  await flush();
  expect(handled).toEqual([['1'], ['3', '5']]);
  // Each batch commits past what it handled and past the other tenant's messages after it.
  expect(calls).toEqual(['commit 0@3', 'commit 0@6']);
  await follower.end();
  expect(calls.slice(2)).toEqual(['seek 0@6', 'resume 0']);
  expect(tail.followers()).toBe(0);
});

it('leaves the tail at once when handed more than it may hold, and the member fetches from where it was', async () => {
  const tail = tailWith(...[0, 1, 2, 3, 4, 5].map((offset) => message(offset)));
  const { calls, consumer } = memberConsumer();
  const { handled, batches } = handling();
  const follower = TailFollower.start({
    tail, consumer, batches, topic: 'test.topic', partition: 0, tenantId: A, from: '0', running: () => true, logger, maxWaiting: 3,
  })!;
  await follower.ended;
  expect(tail.followers()).toBe(0);
  expect(handled).toEqual([]);
  expect(calls).toEqual(['seek 0@0', 'resume 0']);
});

it('gives the partition back from the first offset not handled when a batch fails', async () => {
  const tail = tailWith(message(0));
  const { calls, consumer } = memberConsumer();
  const { handled, batches } = handling({ fail: (offsets) => offsets.includes('2') });
  const follower = TailFollower.start({ tail, consumer, batches, topic: 'test.topic', partition: 0, tenantId: A, from: '1', running: () => true, logger })!;
  tail.received(0, [message(1)]);
  await flush();
  tail.received(0, [message(2)]);
  await follower.ended;
  expect(handled).toEqual([['1']]);
  expect(calls).toEqual(['commit 0@2', 'seek 0@2', 'resume 0']);
  expect(tail.followers()).toBe(0);
});

it('leaves the partition to the member’s leaving when the member is stopping', async () => {
  const tail = tailWith(message(0));
  const { calls, consumer } = memberConsumer();
  const { batches } = handling();
  const follower = TailFollower.start({ tail, consumer, batches, topic: 'test.topic', partition: 0, tenantId: A, from: '1', running: () => false, logger })!;
  await follower.end();
  expect(calls).toEqual([]);
});
