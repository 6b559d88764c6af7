import { Partitioners, type ICustomPartitioner, type PartitionerArgs } from 'kafkajs';

/**
 * The partitioner of every producer of the platform: the Java client's (murmur2 of the key's UTF-8
 * bytes, positive, modulo the topic's partition count), so a key lands on the same partition
 * whichever client produced it, and on the partition kafkajs's DefaultPartitioner chooses (tested
 * against it). It exists for speed only: kafkajs computes the hash in 64-bit `Long`s built on
 * BigInt and copies each key into a new Buffer, about 5 µs a message here, which was an eighth of
 * the gateway's CPU in a BatchPublish of 500 (bench/events.bench.ts, profiled); 32-bit integer
 * multiplication gives the same low 32 bits, which are all the hash keeps. A message that names
 * its partition keeps it; a message without a key goes to kafkajs's own round robin.
 */
export const keyPartitioner: ICustomPartitioner = () => {
  const roundRobin = Partitioners.DefaultPartitioner();
  return (args: PartitionerArgs) => {
    const { message, partitionMetadata } = args;
    if (message.partition !== undefined && message.partition !== null) return message.partition;
    if (message.key === undefined || message.key === null) return roundRobin(args);
    return (murmur2(message.key) & 0x7fffffff) % partitionMetadata.length;
  };
};

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** A reused buffer for a string key's UTF-8 bytes (at most 3 per UTF-16 unit); longer keys get their own. */
const scratch = Buffer.alloc(768);

/** Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2) of a key's bytes, as a signed 32-bit integer. */
export function murmur2(key: Buffer | string): number {
  let data: Buffer = scratch;
  let length: number;
  if (typeof key !== 'string') {
    data = key;
    length = key.length;
  } else if (key.length * 3 <= scratch.length) {
    length = scratch.write(key);
  } else {
    data = Buffer.from(key);
    length = data.length;
  }
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  // The last one to three bytes, falling through as Kafka's switch does.
  const rest = length & 3;
  if (rest === 3) h ^= data[whole + 2] << 16;
  if (rest >= 2) h ^= data[whole + 1] << 8;
  if (rest >= 1) h = Math.imul(h ^ data[whole], M);
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}
