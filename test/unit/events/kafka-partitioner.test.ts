import { randomBytes, randomInt } from 'node:crypto';
import { Partitioners, type PartitionerArgs, type PartitionMetadata } from 'kafkajs';
import { keyPartitioner, murmur2 } from '../../../common/kafka-partitioner';

// The platform's partitioner must choose what the Java client and kafkajs's DefaultPartitioner
// choose for every key, or one key's events would be split across partitions (and lose their order)
// depending on which producer sent them.

const partitions = (count: number): PartitionMetadata[] =>
  Array.from({ length: count }, (_, partitionId) => ({ partitionId, leader: 1, replicas: [1], isr: [1], partitionErrorCode: 0, offlineReplicas: [] }));

const args = (key: PartitionerArgs['message']['key'], count: number, partition?: number): PartitionerArgs => ({
  topic: 'platform.data.events', partitionMetadata: partitions(count), message: { key, value: 'v', ...(partition === undefined ? {} : { partition }) },
});

describe('keyPartitioner', () => {
  it("hashes as the Java client's Utils.murmur2 (Kafka's own test vectors)", () => {
    const vectors: Array<[string, number]> = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ];
    for (const [key, hash] of vectors) {
      expect(murmur2(key)).toBe(hash);
      expect(murmur2(Buffer.from(key))).toBe(hash);
    }
  });

  it("chooses kafkajs's DefaultPartitioner's partition for string and byte keys of every length and alphabet", () => {
    const ours = keyPartitioner();
    const theirs = Partitioners.DefaultPartitioner();
    const alphabets = ['abcdefghij0123456789-', 'äöüßéñ', '日本語のキー', '😀🚀', '\u0000\u007f\u0080\u07ff\u0800\uffff'];
    const keys: Array<string | Buffer> = [''];
    for (let length = 1; length <= 300; length += 1) {
      const alphabet = [...alphabets[length % alphabets.length]];
      keys.push(Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join(''));
      keys.push(randomBytes(length % 40));
    }
    for (let i = 0; i < 200; i += 1) keys.push(crypto.randomUUID());
    for (const key of keys) {
      for (const count of [1, 3, 6, 12, 100]) expect([key, count, ours(args(key, count))]).toEqual([key, count, theirs(args(key, count))]);
    }
  });

  it('keeps a partition the message names, and spreads keyless messages over the partitions', () => {
    const choose = keyPartitioner();
    expect(choose(args('some-key', 6, 4))).toBe(4);
    const chosen = new Set(Array.from({ length: 60 }, () => choose(args(null, 6))));
    expect([...chosen].sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });
});
