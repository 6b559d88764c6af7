import { encodeEvent, type OutgoingEvent } from '../../services/events/envelope';
import { ReconnectingProducer, type Kafka } from '../../common/kafka';
import type { PendingOutboxEvent } from '../../db/queries/events/outbox.queries';
import { isTopicName } from '../../services/events/topics';

/** The event an outbox row stands for: its topic, partition key and envelope (docs/reference/events.md#rule-1). */
export function outboxRowToEvent(row: PendingOutboxEvent): OutgoingEvent {
  // Writers name topics from the catalogue; a row that does not is a bug, never something to publish.
  if (!isTopicName(row.topic)) throw new Error(`outbox event ${row.id}: topic ${row.topic} is not in the catalogue`);
  return {
    topic: row.topic,
    key: row.partitionKey,
    correlationId: row.correlationId,
    envelope: {
      id: row.id,
      type: row.type,
      source: row.source,
      tenantId: row.tenantId,
      data: row.data,
      schemaVersion: row.schemaVersion,
      timestamp: row.occurredAt,
      traceId: row.traceId,
    },
  };
}

/**
 * Publishes outbox rows as the envelopes of docs/reference/events.md#rule-1 with the idempotent, one-in-flight producer, so the
 * rows of one key reach their partition in seq order and a client-side retry never doubles one.
 */
export class OutboxPublisher {
  private readonly producer: ReconnectingProducer;

  constructor(kafka: Kafka) {
    this.producer = new ReconnectingProducer(kafka);
  }

  /** Resolves when Kafka has acknowledged every row; throws (rows unpublished or partly so) otherwise. */
  async publish(rows: readonly PendingOutboxEvent[]): Promise<void> {
    await this.producer.send(rows.map((row) => encodeEvent(outboxRowToEvent(row))));
  }

  /** Drops the producer after a failure (see ReconnectingProducer). */
  reset(): Promise<void> {
    return this.producer.reset();
  }
}
