import { config } from '../../common/config';
import { FailFastProducer, type Acknowledgement } from '../../common/fail-fast-producer';
import { createKafka } from '../../common/kafka';
import { newId } from '../../common/ids';
import { createTestTopic, type TestTopic } from '../helpers/audit';
import { closedPort } from '../helpers/kafka';

/**
 * The publishing producer's group commit (common/fail-fast-producer.ts) against a real broker:
 * records sent at once share produce requests, and each caller must still hear the partition and
 * offset where its own record is stored, in the order of its key (bench/events.bench.ts measures
 * what the sharing saves).
 */

jest.setTimeout(60_000);

let topic: TestTopic;
let producer: FailFastProducer;

beforeAll(async () => {
  topic = await createTestTopic('fail-fast-producer', 3);
  producer = new FailFastProducer(topic.kafka, 5000);
});

afterAll(async () => {
  await producer?.close();
  await topic?.drop();
});

/** Where each record of the topic is stored, by its value, read back from the broker. */
async function storedPositions(count: number): Promise<Map<string, Acknowledgement>> {
  const positions = new Map<string, Acknowledgement>();
  const consumer = topic.kafka.consumer({ groupId: `test.fail-fast-${newId().slice(-8)}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic.name], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${positions.size} of ${count} records`)), 30_000);
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          positions.set(message.value!.toString(), { partition, offset: message.offset });
          if (positions.size === count) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return positions;
}

it('tells every one of 300 concurrent senders the partition and offset of its own record, in the order of each key', async () => {
  // 50 keys, so every one of the 3 partitions gets records (10 would miss one about once in 20 runs).
  const keys = Array.from({ length: 50 }, () => newId());
  const values = Array.from({ length: 300 }, (_, index) => `${keys[index % keys.length]}:${index}`);
  const acknowledgements = await Promise.all(values.map((value) => producer.send({
    topic: topic.name, key: value.split(':')[0], value, headers: {},
  })));

  const stored = await storedPositions(values.length);
  expect(values.map((value, index) => ({ value, ...acknowledgements[index] }))).toEqual(values.map((value) => ({ value, ...stored.get(value) })));
  // A key's records keep the order they were sent in.
  for (const key of keys) {
    const offsets = values.flatMap((value, index) => (value.startsWith(key) ? [BigInt(acknowledgements[index].offset)] : []));
    expect(offsets).toEqual([...offsets].sort((a, b) => (a < b ? -1 : 1)));
  }
  expect(new Set(acknowledgements.map(({ partition }) => partition))).toEqual(new Set([0, 1, 2]));
});

it('fails every waiting sender when the broker cannot be reached, and sends again once asked', async () => {
  const down = new FailFastProducer(createKafka(
    { ...config().kafka, brokers: [`127.0.0.1:${await closedPort()}`], clientId: 'test-fail-fast-down' }, undefined,
    { connectionTimeoutMs: 500, requestTimeoutMs: 500, retries: 0 },
  ), 500);
  try {
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, (_, index) => down.send({
      topic: topic.name, key: 'k', value: `down:${index}`, headers: {},
    })));
    expect(outcomes.map(({ status }) => status)).toEqual(Array(5).fill('rejected'));
    await expect(down.send({ topic: topic.name, key: 'k', value: 'down:again', headers: {} })).rejects.toThrow();
  } finally {
    await down.close();
  }
});
