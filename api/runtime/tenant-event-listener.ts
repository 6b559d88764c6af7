import { randomUUID } from 'node:crypto';
import { EVENT_HEADERS, headerValue } from '../../services/events/envelope';
import type { Config } from '../../common/config';
import { createConsumer, createKafka, onGroupJoin, type Consumer, type Kafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';

/**
 * How long the broker holds a fetch open when there is nothing to read. An event ends the wait at once
 * (unless the listener may wait), so this costs no freshness; it sets how often a quiet gateway asks
 * (each listener twice a second) and how long a stop waits for the fetch in flight.
 */
const FETCH_WAIT_MS = 500;

/**
 * A fetch answer size no topic here reaches within FETCH_WAIT_MS, so a listener that may wait is
 * answered once per wait, however many events arrived in it (see `mayWait`).
 */
const WAITING_MIN_BYTES = 1024 * 1024;

export interface TenantEventListenerOptions {
  /** What the listener keeps fresh: names its consumer group and its log lines (`permission-cache`). */
  name: string;
  topic: string;
  /** Whether an event of this type changes what is cached. */
  concerns: (type: string) => boolean;
  /** Drops what is cached for the tenant. */
  invalidate: (tenantId: string) => void;
  /**
   * Whether an event may wait up to FETCH_WAIT_MS to arrive with the others of that time: for a cache
   * that something else already keeps exact (the permission cache, by PostgreSQL's version notices).
   * Its topic may carry every login's event; answered at once, the listener would cost the gateway and
   * the broker a fetch per outbox batch instead of two a second.
   */
  mayWait?: boolean;
}

/**
 * Drops a tenant's entry of a gateway cache (permissions, plan info, installed modules) when an event
 * of the tenant that concerns it arrives, so a change made through another gateway process takes
 * effect here at once. Every gateway instance must see every change, so each reads in a consumer
 * group of its own (`gateway.<name>.<instance>`), from the latest offset: what happened before it
 * started is not in its cache, and it commits no offsets: a group without offsets is dropped by the
 * broker once its instance has gone, where committed ones would keep every past instance's group
 * for the offsets' retention. Events are told apart by their headers; the value is not parsed.
 * Nothing depends on it for correctness: each cache bounds staleness itself (a version check or a
 * TTL) while Kafka is away.
 */
export class TenantEventListener {
  readonly groupId: string;
  private consumer: Consumer | null = null;
  private joinedOnce!: () => void;
  /** Settles the first time the consumer has joined its group (tests wait for it). */
  readonly joined = new Promise<void>((resolve) => { this.joinedOnce = resolve; });

  constructor(private readonly kafka: Kafka, private readonly options: TenantEventListenerOptions, private readonly logger: Logger) {
    this.groupId = `gateway.${options.name}.${randomUUID()}`;
  }

  /** Connects and starts consuming; throws when Kafka cannot be reached (the caller retries). */
  async start(): Promise<void> {
    const { topic, concerns, invalidate, name, mayWait } = this.options;
    const consumer = createConsumer(this.kafka, {
      groupId: this.groupId, maxWaitTimeInMs: FETCH_WAIT_MS, minBytes: mayWait ? WAITING_MIN_BYTES : 1, allowAutoTopicCreation: false,
    });
    onGroupJoin(consumer, () => this.joinedOnce());
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: false });
      await consumer.run({
        autoCommit: false,
        eachMessage: ({ message }) => {
          if (concerns(headerValue(message, EVENT_HEADERS.type) ?? '')) {
            const tenantId = headerValue(message, EVENT_HEADERS.tenantId);
            if (tenantId) invalidate(tenantId);
          }
          return Promise.resolve();
        },
      });
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
    this.consumer = consumer;
    this.logger.info({ groupId: this.groupId, topic }, `${name} follows its events`);
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = null;
    await consumer?.disconnect().catch((error: unknown) => this.logger.warn({ err: error }, `${this.options.name} consumer did not disconnect cleanly`));
  }
}

/** A listener with a Kafka client of its own (client id `<KAFKA_CLIENT_ID>-<name>`). */
export function createTenantEventListener(config: Readonly<Config>, logger: Logger, options: TenantEventListenerOptions): TenantEventListener {
  const kafka = createKafka({ ...config.kafka, clientId: `${config.kafka.clientId}-${options.name}` }, logger);
  return new TenantEventListener(kafka, options, logger);
}
