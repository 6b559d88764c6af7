import type { DatabaseTransactionConnection } from '../../db/pool';
import type { EventInput } from './publish';

/**
 * What the bus's own features record in the audit trail: changes of webhook endpoints
 * (services/events/webhooks/endpoints.ts) and dead letters re-published by an operator
 * (services/events/dead-letters/audit.ts). The entry's fields are those of an audit record
 * (services/audit/record.ts) that these features fill.
 */
export interface AuditEntry {
  tenantId: string;
  /** The service writing the record: `events` here. */
  source: string;
  action: string;
  entityType: string;
  entityId: string;
  actorId: string | null;
  actorIp?: string | null;
  actorUserAgent?: string | null;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  meta?: Record<string, unknown>;
  traceId?: string;
}

/**
 * Audit's writer as the bus takes it. Audit sits above the bus in the order of services
 * (docs/decisions/layout.md, The order of services): its records travel as events through the
 * bus's outbox. So the bus names only this much of it, and the composition roots pass the writer
 * in (services/audit/writer.ts, auditTrail): the gateway's (api/gateway-runtime.ts) and the
 * dead-letter activities' (activities/events/dead-letters.activities.ts).
 */
export interface AuditTrail {
  /** Writes the record to the outbox in the caller's transaction, so it commits with the change; returns its id. */
  record: (tx: DatabaseTransactionConnection, entry: AuditEntry) => Promise<string>;
  /** The record's outbox event, for a caller that writes it with its other events in one statement (enqueueEvents). */
  eventOf: (entry: AuditEntry) => EventInput;
}
