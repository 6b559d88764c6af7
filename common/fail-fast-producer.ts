import type { ICustomPartitioner, Message, Producer, RecordMetadata } from 'kafkajs';
import { groupByTopic, topicMessagesOf, type Kafka, type OutgoingRecord } from './kafka';
import { keyPartitioner } from './kafka-partitioner';

/** Where the broker stored a record. */
export interface Acknowledgement {
  partition: number;
  offset: string;
}

/**
 * A record of `send`, whose caller hears its partition and offset: the partitioner notes the
 * partition it chose on it. The records of `sendBatch` are plain messages and noted nowhere (noting
 * every one of a BatchPublish of 500 in a WeakMap cost a thirtieth of the call's CPU).
 */
class AcknowledgedMessage implements Message {
  partitionChosen: number | undefined;
  constructor(readonly key: string, readonly value: string, readonly headers: Record<string, string>) {}
}

/** The platform's partitioner (murmur2 of the key, as the Java client), noting its choice on the records of `send`. */
const recordingPartitioner: ICustomPartitioner = () => {
  const choose = keyPartitioner();
  return (args) => {
    const partition = choose(args);
    if (args.message instanceof AcknowledgedMessage) args.message.partitionChosen = partition;
    return partition;
  };
};

interface Waiting {
  topic: string;
  message: AcknowledgedMessage;
  resolve: (acknowledgement: Acknowledgement) => void;
  reject: (error: unknown) => void;
}

/**
 * A producer for a caller that waits for its record and must hear at once when the broker cannot
 * take it (docs/reference/events.md#rule-10: no client-side buffering; the caller decides between retry,
 * dead-letter or drop). Its Kafka client should not retry and should have short timeouts
 * (createKafka's `timeouts`); records are acknowledged by every in-sync replica (acks -1), and each
 * caller hears its record's partition and offset. Not idempotent: kafkajs's idempotent producer
 * insists on retries, and a record the caller re-sends is a new record anyway, which consumers
 * de-duplicate by event id. Connected on first use; a failed connection attempt is forgotten, so
 * the next send tries again (a connected producer reconnects to brokers by itself).
 *
 * Group commit: one produce request is on its way at a time, and the records sent meanwhile go
 * together in the next one. A lone record leaves at once; under concurrent publishers one request
 * (one socket write, one record batch) carries many, where each record used to be a request of its
 * own. Order per key holds: a later request leaves only after the earlier one was answered. When a
 * request fails, the records waiting behind it fail with it, so nobody waits for a broker that is
 * down longer than one request's timeout.
 */
export class FailFastProducer {
  private connecting: Promise<Producer> | null = null;
  private waiting: Waiting[] = [];
  private sending = false;

  constructor(private readonly kafka: Kafka, private readonly ackTimeoutMs: number) {}

  send(record: OutgoingRecord): Promise<Acknowledgement> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ topic: record.topic, message: new AcknowledgedMessage(record.key, record.value, record.headers), resolve, reject });
      if (!this.sending) void this.sendWaiting();
    });
  }

  /**
   * Several records in one producer batch (one kafkajs sendBatch: one produce request per broker
   * leading their partitions), resolved once every record is acknowledged. Not atomic: a failure
   * may leave some records written, which a caller's retry writes again (consumers de-duplicate by
   * event id).
   */
  async sendBatch(records: readonly OutgoingRecord[]): Promise<void> {
    const producer = await this.connected();
    await producer.sendBatch({ acks: -1, timeout: this.ackTimeoutMs, topicMessages: topicMessagesOf(records) });
  }

  async close(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = null;
    const producer = await connecting?.catch(() => null);
    await producer?.disconnect().catch(() => undefined);
  }

  /** Sends what is waiting as one request, then what came meanwhile, until nothing waits. */
  private async sendWaiting(): Promise<void> {
    this.sending = true;
    try {
      while (this.waiting.length > 0) {
        const request = this.waiting;
        this.waiting = [];
        try {
          const producer = await this.connected();
          const acknowledged = await producer.sendBatch({ acks: -1, timeout: this.ackTimeoutMs, topicMessages: groupByTopic(request) });
          this.acknowledge(request, acknowledged);
        } catch (error) {
          const failed = [...request, ...this.waiting];
          this.waiting = [];
          for (const waiting of failed) waiting.reject(error);
        }
      }
    } finally {
      this.sending = false;
    }
  }

  /**
   * Each record's offset: the broker answers a base offset per partition and stores a partition's
   * records of the request in their order, so a record's offset is the base plus the records of its
   * partition before it.
   */
  private acknowledge(request: readonly Waiting[], acknowledged: readonly RecordMetadata[]): void {
    const base = new Map(acknowledged.map((metadata) => [`${metadata.topicName}/${metadata.partition}`, BigInt(metadata.baseOffset ?? metadata.offset ?? '-1')]));
    const before = new Map<string, bigint>();
    for (const { topic, message, resolve, reject } of request) {
      const partition = message.partitionChosen;
      const key = `${topic}/${partition}`;
      const offset = base.get(key);
      if (partition === undefined || offset === undefined) {
        reject(new Error(`the broker's answer names no offset for a record of ${topic}`));
        continue;
      }
      const earlier = before.get(key) ?? 0n;
      before.set(key, earlier + 1n);
      resolve({ partition, offset: (offset + earlier).toString() });
    }
  }

  /** Concurrent sends share one connection attempt; a failed attempt is forgotten. */
  private connected(): Promise<Producer> {
    this.connecting ??= (async () => {
      const producer = this.kafka.producer({ allowAutoTopicCreation: false, createPartitioner: recordingPartitioner });
      try {
        await producer.connect();
        return producer;
      } catch (error) {
        await producer.disconnect().catch(() => undefined);
        throw error;
      }
    })();
    const connecting = this.connecting;
    connecting.catch(() => {
      if (this.connecting === connecting) this.connecting = null;
    });
    return connecting;
  }
}
