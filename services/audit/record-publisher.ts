import type { CommonQueryMethods } from 'slonik';
import { insertBufferedAuditEvents, type BufferedAuditEvent } from '../../db/queries/audit/audit-fallback.queries';
import { encodeEvent } from '../events/envelope';
import type { EventEnvelope } from '../../common/event-envelope';
import { topics } from '../events/topics';
import { isUuid, newId } from '../../common/ids';
import { ReconnectingProducer, type Kafka, type OutgoingRecord } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';
import { withTimeout } from '../../common/timeout';
import { AUDIT_EVENT_TYPE, AUDIT_SCHEMA_VERSION, auditPayloadOrThrow } from './record';
import type { AuditDraft } from './writer';

export interface AuditIntakeDeps {
  kafka: Kafka;
  /** Where records go when Kafka does not take them: the gateway's pool (platform_app may insert). */
  bufferDb: CommonQueryMethods;
  logger: Logger;
  settings: { publishTimeoutMs: number; kafkaRetryMs: number };
  /** Tests send to a topic of their own. */
  topic?: string;
}

/** The 202 answer of docs/reference/audit.md#rule-3 for one record. */
export interface AcceptedAuditRecord {
  auditId: string;
  status: 'queued';
  createdAt: string;
}

/**
 * The direct intake path: records (of any tenants) go straight to Kafka, which is faster than the
 * outbox because nothing else has to commit with them. When Kafka does not acknowledge within
 * publishTimeoutMs, the records are written to the durable fallback buffer instead, which the audit
 * consumer replays every 30 s; for kafkaRetryMs after a failure further calls go to the buffer
 * at once, so a broker outage does not make every caller wait out the timeout. A record is lost
 * only if both Kafka and PostgreSQL refuse it, and then the caller gets the error.
 */
export class AuditIntake {
  private readonly producer: ReconnectingProducer;
  private readonly topic: string;
  private kafkaDownUntil = 0;

  constructor(private readonly deps: AuditIntakeDeps) {
    this.producer = new ReconnectingProducer(deps.kafka);
    this.topic = deps.topic ?? topics.audit.name;
  }

  async publishAuditRecords(drafts: readonly AuditDraft[]): Promise<AcceptedAuditRecord[]> {
    const createdAt = new Date().toISOString();
    const events = drafts.map((draft) => toEvent(draft, createdAt));
    if (events.length === 0) return [];
    if (Date.now() < this.kafkaDownUntil || !(await this.sendToKafka(events))) {
      await insertBufferedAuditEvents(this.deps.bufferDb, events);
    }
    return events.map(({ envelope }) => ({ auditId: envelope.id, status: 'queued', createdAt }));
  }

  close(): Promise<void> {
    return this.producer.reset();
  }

  /** True when Kafka acknowledged every record in time. */
  private async sendToKafka(events: readonly BufferedAuditEvent[]): Promise<boolean> {
    const { publishTimeoutMs, kafkaRetryMs } = this.deps.settings;
    try {
      await withTimeout(this.producer.send(events.map((event) => auditMessage(event, this.topic))), publishTimeoutMs, 'Kafka');
      return true;
    } catch (error) {
      // A send still in flight may yet succeed; then the buffered copy is a duplicate the
      // consumer drops by record id.
      this.kafkaDownUntil = Date.now() + kafkaRetryMs;
      this.deps.logger.warn({ err: error, records: events.length, retryInMs: kafkaRetryMs }, 'audit records buffered: Kafka unavailable');
      await this.producer.reset();
      return false;
    }
  }
}

/** The broker message of an audit event, for the audit topic or a test's own. */
export function auditMessage({ key, envelope }: BufferedAuditEvent, topic: string): OutgoingRecord {
  return { ...encodeEvent({ topic: topics.audit.name, key, envelope, correlationId: null }), topic };
}

function toEvent(draft: AuditDraft, timestamp: string): BufferedAuditEvent {
  const { tenantId, source, traceId, ...fields } = draft;
  if (!isUuid(tenantId)) throw problems.validation([{ field: 'tenantId', code: 'invalid-tenant', message: 'tenantId must be a UUID' }]);
  const envelope: EventEnvelope = {
    id: newId(),
    type: AUDIT_EVENT_TYPE,
    source,
    tenantId,
    data: auditPayloadOrThrow(fields),
    schemaVersion: AUDIT_SCHEMA_VERSION,
    timestamp,
    traceId: traceId ?? null,
  };
  return { key: draft.entityId, envelope };
}
