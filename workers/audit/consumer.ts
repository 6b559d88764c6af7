import { auditRecordFromEnvelope, type AuditRecord } from '../../services/audit/record';
import { decodeEvent, EventDecodeError } from '../../services/events/envelope';
import { topics } from '../../services/events/topics';
import {
  createConsumer, onGroupJoin, runCommittingConsumer, type Consumer, type Kafka, type MessageChunk,
} from '../../common/kafka';
import type { Logger } from '../../common/logger';
import type { AuditStore } from '../../services/audit/store';

export interface AuditConsumerDeps {
  kafka: Kafka;
  store: AuditStore;
  logger: Logger;
  settings: { groupId: string; chunkSize: number; partitionsConcurrently: number };
  /** Tests read a topic of their own. */
  topic?: string;
}

export interface AuditConsumerStatus {
  stored: number;
  duplicates: number;
  /** Messages on the topic that are no audit record; logged one by one, never stored. */
  rejected: number;
  lastStoredAt: string | null;
}

export const AUDIT_CONSUMER_JOINED = 'audit consumer joined its group';

/**
 * Moves audit events from Kafka into the store. Offsets are committed only after the chunk's
 * transaction committed (at least once), and the store drops records it already holds (by record id),
 * so every record is stored exactly once. Partitions are consumed concurrently; records of one tenant
 * spread over several partitions are serialized by the tenant's chain head lock.
 */
export class AuditConsumer {
  private consumer: Consumer | null = null;
  private readonly state: AuditConsumerStatus = { stored: 0, duplicates: 0, rejected: 0, lastStoredAt: null };

  constructor(private readonly deps: AuditConsumerDeps) {}

  status(): Readonly<AuditConsumerStatus> {
    return { ...this.state };
  }

  /** Joins the group and starts consuming; resolves once the consumer runs. */
  async start(): Promise<void> {
    const { kafka, logger, settings } = this.deps;
    const consumer = createConsumer(kafka, { groupId: settings.groupId, maxWaitTimeInMs: 250, allowAutoTopicCreation: false });
    onGroupJoin(consumer, (assignment) => logger.info({ groupId: settings.groupId, assignment }, AUDIT_CONSUMER_JOINED));
    this.consumer = consumer;
    await consumer.connect();
    await runCommittingConsumer(consumer, {
      topic: this.deps.topic ?? topics.audit.name,
      // A group's first start reads everything the topic retains: records sent before it existed count too.
      fromBeginning: true,
      partitionsConcurrently: settings.partitionsConcurrently,
      chunkSize: settings.chunkSize,
      handle: (chunk) => this.handle(chunk),
    });
  }

  /** Leaves the group after the chunk in hand; its offsets are committed only if its insert committed. */
  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = null;
    await consumer?.disconnect();
  }

  private async handle({ topic, partition, messages }: MessageChunk): Promise<void> {
    const records: AuditRecord[] = [];
    for (const message of messages) {
      const record = this.recordOf(message, { topic, partition, offset: message.offset });
      if (record) records.push(record);
    }
    const { stored, duplicates } = await this.deps.store.append(records);
    this.state.stored += stored;
    this.state.duplicates += duplicates;
    if (stored > 0) this.state.lastStoredAt = new Date().toISOString();
  }

  /** The record a message carries, or null (counted and explained in the log) when it carries none. */
  private recordOf(message: MessageChunk['messages'][number], where: Record<string, unknown>): AuditRecord | null {
    let reason: string;
    try {
      const result = auditRecordFromEnvelope(decodeEvent(message).envelope);
      if (result.ok) return result.record;
      reason = result.reason;
    } catch (error) {
      if (!(error instanceof EventDecodeError)) throw error;
      reason = error.message;
    }
    this.state.rejected += 1;
    this.deps.logger.error({ ...where, reason }, 'not an audit record; skipped');
    return null;
  }
}
