import { readFileSync } from 'node:fs';
import {
  ConfigResourceTypes, Kafka, logLevel,
  type Admin, type Producer, type Consumer, type ConsumerConfig, type EachBatchPayload, type KafkaConfig, type KafkaMessage, type Message,
} from 'kafkajs';
import type { Config } from './config';
import { keyPartitioner } from './kafka-partitioner';
import type { Logger } from './logger';

/**
 * Every Kafka call of the platform goes through this module, so the client library (kafkajs, with
 * no release since 2023) can be replaced without touching the domains.
 *
 * A client's settings: where and under which client id, and the process's TLS and SASL
 * (config.kafka: KAFKA_SSL, KAFKA_SASL_*). The security members are required, so a caller that
 * builds its own settings passes them on (`{ ...config.kafka, clientId }`) instead of silently
 * connecting without them.
 */
export type KafkaSettings = Pick<Config['kafka'], 'brokers' | 'clientId' | 'ssl' | 'sslCaFile' | 'sasl'>;

export type { Admin, Producer, Consumer, ConsumerConfig, Kafka, KafkaMessage, Message };

/** A client's patience: how long to wait for a connection and for an answer, and how often to retry. */
export interface KafkaTimeouts {
  connectionTimeoutMs: number;
  requestTimeoutMs: number;
  retries: number;
}

// A bounded retry: callers (relay, health check) decide what happens when the broker is down.
const DEFAULT_TIMEOUTS: KafkaTimeouts = { connectionTimeoutMs: 3000, requestTimeoutMs: 10_000, retries: 3 };

/**
 * kafkajs's `ssl` and `sasl` of the settings: TLS checking the brokers' certificates (host name
 * included) against KAFKA_SSL_CA_FILE or Node's public CAs; SASL when a mechanism is set (the
 * configuration has already refused a mechanism without its username and password).
 */
export function kafkaSecurity({ ssl, sslCaFile, sasl }: Pick<KafkaSettings, 'ssl' | 'sslCaFile' | 'sasl'>): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const { mechanism, username, password } = sasl;
  return {
    ...(ssl && { ssl: sslCaFile ? { ca: readFileSync(sslCaFile, 'utf8') } : true }),
    ...(mechanism && username !== undefined && password !== undefined && { sasl: { mechanism, username, password } as KafkaConfig['sasl'] }),
  };
}

/** Every kafkajs client of the platform: the relay's, the consumers', the gateway's admin and publishers. */
export function createKafka(settings: KafkaSettings, logger?: Logger, timeouts: KafkaTimeouts = DEFAULT_TIMEOUTS): Kafka {
  const { brokers, clientId } = settings;
  return new Kafka({
    clientId,
    brokers,
    ...kafkaSecurity(settings),
    connectionTimeout: timeouts.connectionTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    retry: { retries: timeouts.retries, initialRetryTime: 100, maxRetryTime: 2000 },
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, label, log }) => {
      logger?.warn({ namespace, kafka: log }, `kafka ${label.toLowerCase()}: ${log.message}`);
    },
  });
}

/**
 * A producer for events that must stay in order per key and not be doubled by client retries:
 * idempotent, one request in flight.
 */
export function createOrderedProducer(kafka: Kafka): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    // The murmur2 partitioner of the Java client, so a key lands on the same partition whichever
    // client produced it (named explicitly, kafkajs also stops warning about its v2 change).
    createPartitioner: keyPartitioner,
  });
}

export interface OutgoingRecord {
  topic: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

/**
 * Sends records in one producer batch and resolves once the broker has acknowledged all of them.
 * Records are grouped by topic keeping their relative order, so records of one key (which always
 * share a topic) reach their partition in the order given.
 */
export async function sendInOrder(producer: Producer, records: readonly OutgoingRecord[]): Promise<void> {
  await producer.sendBatch({ topicMessages: topicMessagesOf(records) });
}

/** Records grouped by topic, each topic's in the order given (a producer batch's shape). */
export function topicMessagesOf(records: readonly OutgoingRecord[]): Array<{ topic: string; messages: Message[] }> {
  return groupByTopic(records.map(({ topic, key, value, headers }) => ({ topic, message: { key, value, headers } })));
}

/** Messages grouped by topic, each topic's in the order given; the message objects are kept (a partitioner may recognise them). */
export function groupByTopic(items: ReadonlyArray<{ topic: string; message: Message }>): Array<{ topic: string; messages: Message[] }> {
  const byTopic = new Map<string, Message[]>();
  for (const { topic, message } of items) {
    const messages = byTopic.get(topic) ?? [];
    messages.push(message);
    byTopic.set(topic, messages);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

/**
 * The ordered producer, connected on first use and dropped after a failure: the idempotent
 * producer's sequence numbers may no longer match the broker's, and a fresh producer (new producer
 * id) starts clean. Re-sending a batch that was partly written duplicates some events, which
 * consumers absorb by event id.
 */
export class ReconnectingProducer {
  private producer: Producer | null = null;

  constructor(private readonly kafka: Kafka) {}

  /** Resolves when Kafka has acknowledged every record (see sendInOrder); throws otherwise. */
  async send(records: readonly OutgoingRecord[]): Promise<void> {
    await sendInOrder(await this.connected(), records);
  }

  async reset(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    await producer?.disconnect().catch(() => undefined);
  }

  private async connected(): Promise<Producer> {
    if (this.producer) return this.producer;
    const producer = createOrderedProducer(this.kafka);
    try {
      await producer.connect();
    } catch (error) {
      await producer.disconnect().catch(() => undefined);
      throw error;
    }
    this.producer = producer;
    return producer;
  }
}

export function createConsumer(kafka: Kafka, config: ConsumerConfig): Consumer {
  return kafka.consumer(config);
}

/** Some messages of one partition, in offset order. */
export interface MessageChunk {
  topic: string;
  partition: number;
  messages: readonly KafkaMessage[];
}

export interface CommittingConsumerOptions extends BatchConsumerPlacement {
  /** The most messages handed to `handle` at once; a fetched batch is cut into chunks of this size. */
  chunkSize: number;
  handle: (chunk: MessageChunk) => Promise<void>;
}

/** Where a consumer reads: its topic, where a group without committed offsets starts, and how many partitions at once. */
export interface BatchConsumerPlacement {
  topic: string;
  fromBeginning: boolean;
  partitionsConcurrently: number;
}

/**
 * Subscribes the consumer to its topic and runs `eachBatch` for every fetched batch, with offsets
 * resolved and committed by `eachBatch` alone (nothing automatic). Resolves once the consumer runs.
 */
export async function runBatchConsumer(
  consumer: Consumer, { topic, fromBeginning, partitionsConcurrently }: BatchConsumerPlacement, eachBatch: (run: EachBatchPayload) => Promise<void>,
): Promise<void> {
  await consumer.subscribe({ topics: [topic], fromBeginning });
  await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: partitionsConcurrently, eachBatch });
}

/**
 * Consumes a topic at least once: each chunk's offsets are committed only after `handle` resolved,
 * so a crash (or a throw, which makes the client re-fetch after its retry backoff) hands the same
 * messages over again. `handle` must therefore be idempotent. Resolves once the consumer runs.
 */
export async function runCommittingConsumer(consumer: Consumer, options: CommittingConsumerOptions): Promise<void> {
  const { chunkSize, handle } = options;
  await runBatchConsumer(consumer, options, async (run) => {
    const { batch } = run;
    for (let start = 0; start < batch.messages.length; start += chunkSize) {
      // After a rebalance the partition may belong to another member: leave the rest to it.
      if (!run.isRunning() || run.isStale()) return;
      const messages = batch.messages.slice(start, start + chunkSize);
      await handle({ topic: batch.topic, partition: batch.partition, messages });
      const last = messages.at(-1)!.offset;
      run.resolveOffset(last);
      // The committed offset is the next one to read.
      await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() }]);
      await run.heartbeat();
    }
  });
}

/**
 * Calls `listener` when the consumer crashed: `restart` tells whether the client starts it again by
 * itself (a retriable failure) or it has stopped for good.
 */
export function onCrash(consumer: Consumer, listener: (error: Error, restart: boolean) => void): void {
  consumer.on(consumer.events.CRASH, (event) => listener(event.payload.error, event.payload.restart));
}

/** Calls `listener` with the partitions assigned (per topic) each time the consumer joins its group. */
export function onGroupJoin(consumer: Consumer, listener: (assignment: Record<string, number[]>) => void): void {
  consumer.on(consumer.events.GROUP_JOIN, (event) => listener(event.payload.memberAssignment));
}

/** A cheap liveness question to the broker: the cluster's metadata. */
export async function describeBroker(admin: Admin): Promise<{ brokers: number; controller: number | null }> {
  const cluster = await admin.describeCluster();
  return { brokers: cluster.brokers.length, controller: cluster.controller };
}

export interface TopicSpec {
  name: string;
  partitions: number;
  replicationFactor: number;
  /** Topic-level settings, e.g. `{ 'retention.ms': '604800000' }`. */
  configs: Record<string, string>;
}

export function listTopics(admin: Admin): Promise<string[]> {
  return admin.listTopics();
}

export async function deleteTopics(admin: Admin, names: readonly string[]): Promise<void> {
  await admin.deleteTopics({ topics: [...names] });
}

/** Creates the topics and waits for their partition leaders; topics that already exist are left alone. */
export async function createTopics(admin: Admin, specs: readonly TopicSpec[]): Promise<void> {
  await admin.createTopics({
    waitForLeaders: true,
    topics: specs.map(({ name, partitions, replicationFactor, configs }) => ({
      topic: name,
      numPartitions: partitions,
      replicationFactor,
      configEntries: Object.entries(configs).map(([configName, value]) => ({ name: configName, value })),
    })),
  });
}

export async function topicPartitionCounts(admin: Admin, names: readonly string[]): Promise<Map<string, number>> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [...names] });
  return new Map(topics.map((topic) => [topic.name, topic.partitions.length]));
}

/** The current value of some settings of each topic (whether set on the topic or inherited). */
export async function describeTopicConfigs(
  admin: Admin, names: readonly string[], configNames: readonly string[],
): Promise<Map<string, Record<string, string>>> {
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: names.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: [...configNames] })),
  });
  return new Map(resources.map((resource) => [
    resource.resourceName,
    Object.fromEntries(resource.configEntries.map((entry) => [entry.configName, entry.configValue])),
  ]));
}

/**
 * Sets topic-level settings. This is Kafka's (non-incremental) AlterConfigs: settings of the topic
 * not named here return to the broker default, so pass every setting the topic should keep.
 */
export async function alterTopicConfigs(admin: Admin, name: string, configs: Record<string, string>): Promise<void> {
  await admin.alterConfigs({
    validateOnly: false,
    resources: [{
      type: ConfigResourceTypes.TOPIC,
      name,
      configEntries: Object.entries(configs).map(([configName, value]) => ({ name: configName, value })),
    }],
  });
}
