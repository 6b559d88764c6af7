import { encodeEvent } from '../../common/events/envelope';
import { createOrderedProducer, sendInOrder, type Kafka, type Producer } from '../../common/kafka';
import type { PendingOutboxEvent } from '../../db/queries/events/outbox.queries';

/**
 * Publishes outbox rows as document 3 envelopes with the idempotent, one-in-flight producer, so the
 * rows of one key reach their partition in seq order and a client-side retry never doubles one.
 */
export class OutboxPublisher {
  private producer: Producer | null = null;

  constructor(private readonly kafka: Kafka) {}

  /** Resolves when Kafka has acknowledged every row; throws (rows unpublished or partly so) otherwise. */
  async publish(rows: readonly PendingOutboxEvent[]): Promise<void> {
    const producer = await this.connected();
    await sendInOrder(producer, rows.map((row) => encodeEvent({
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
    })));
  }

  /**
   * Drops the producer after a failure: the idempotent producer's sequence numbers may no longer
   * match the broker's, and a fresh producer (new producer id) starts clean. Re-sending a batch that
   * was partly written duplicates some events, which consumers absorb by event id.
   */
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
