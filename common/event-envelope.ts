/**
 * The broker message of docs/reference/events.md#rule-1. Its JSON value carries id, type, source, tenantId, data,
 * schemaVersion, timestamp and traceId; the tenant lives in the envelope, never in `data`. The
 * message key is the partition key (the entity id), so the events of one entity stay in order. A few
 * envelope fields are repeated as headers so a consumer can drop other tenants' events (and route
 * by type) without parsing the value.
 */
export interface EventEnvelope {
  /** UUID v7; consumers de-duplicate by it (delivery is at least once). */
  id: string;
  type: string;
  source: string;
  tenantId: string;
  data: Record<string, unknown>;
  schemaVersion: string;
  /** ISO 8601: when the event occurred (its transaction), not when it was relayed. */
  timestamp: string;
  /** The trace of the originating request; null for events no request caused. */
  traceId: string | null;
}
