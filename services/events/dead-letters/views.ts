import type { DeadLetterRow, DeadLetterStatus } from '../../../db/queries/events/dead-letters.queries';

/** The statuses of a dead letter, as the listing filters them. */
export { DEAD_LETTER_STATUSES, type DeadLetterStatus } from '../../../db/queries/events/dead-letters.queries';

/** The proto's EventEnvelope (internal wrapper, protos/platform/events/v1/events.proto), as a dead letter shows the event that failed. */
export interface EventEnvelopeView {
  event_id: string;
  event_type: string;
  source: string;
  tenant_id: string;
  schema_version: string;
  timestamp: string;
  trace_id: string | null;
  correlation_id: string | null;
  /** The typed event (the proto packs it as Any; here the JSON object it was published with). */
  payload: Record<string, unknown>;
  /** The partition key the event was published with. */
  entity_id: string;
}

/**
 * The proto's DLQRecord in snake_case (docs/decisions/events.md, Dead letters),
 * with what an operator needs beside it: the record's id (the REST routes' :id), how often the event
 * was dead-lettered and whether replay-all leaves it alone (the loop guard), and where the group read it.
 */
export interface DeadLetterView {
  id: string;
  original_event: EventEnvelopeView;
  attempt_count: number;
  last_error: string;
  /** When the group first dead-lettered the event. */
  dlq_timestamp: string;
  /** The Kafka group id (`tenant.<tenantId>.<group>` for a tenant's subscription). */
  consumer_group: string;
  status: DeadLetterStatus;
  times_dead_lettered: number;
  quarantined: boolean;
  topic: string;
  partition: number;
  offset: number;
  updated_at: string;
  resolved_at: string | null;
  /** After this an open dead letter becomes expired (EVENTS_DLQ_RETENTION_HOURS after its last dead-lettering). */
  expires_at: string;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export function deadLetterView(row: DeadLetterRow): DeadLetterView {
  const { envelope } = row;
  const data = envelope.data;
  return {
    id: row.id,
    original_event: {
      event_id: row.eventId,
      event_type: row.eventType,
      source: text(envelope.source) ?? '',
      tenant_id: row.tenantId,
      schema_version: text(envelope.schemaVersion) ?? '',
      timestamp: text(envelope.timestamp) ?? row.deadLetteredAt,
      trace_id: text(envelope.traceId),
      correlation_id: row.correlationId,
      payload: typeof data === 'object' && data !== null && !Array.isArray(data) ? data as Record<string, unknown> : {},
      entity_id: row.eventKey,
    },
    attempt_count: row.attemptCount,
    last_error: row.lastError,
    dlq_timestamp: row.deadLetteredAt,
    consumer_group: row.consumerGroup,
    status: row.status,
    times_dead_lettered: row.timesDeadLettered,
    quarantined: row.quarantined,
    topic: row.topic,
    partition: row.partition,
    offset: Number(row.offset),
    updated_at: row.updatedAt,
    resolved_at: row.resolvedAt,
    expires_at: row.expiresAt,
  };
}
