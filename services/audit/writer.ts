import type { DatabaseTransactionConnection } from '../../db/pool';
import { currentRequestContext } from '../../common/context';
import type { AuditTrail } from '../events/audit-trail';
import { enqueueEvent, type EventInput } from '../events/publish';
import { topics } from '../events/topics';
import { AUDIT_EVENT_TYPE, AUDIT_SCHEMA_VERSION, auditPayloadOrThrow, type AuditPayloadInput } from './record';

/** A record as a service describes it; the injected fields come from the request being served. */
export interface AuditDraft extends AuditPayloadInput {
  tenantId: string;
  /** The service writing the record (`money`, `identity`, `gateway` ...). */
  source: string;
  traceId?: string | null;
}

/**
 * Records an audit event inside the caller's transaction: it goes to the outbox with the business
 * change, so the change and its audit record commit together or not at all, and the relay carries it
 * to platform.audit.events (keyed by entity id) for the audit consumer. Returns the audit record id
 * (the event id). An invalid record is a validation problem, raised before anything is written.
 */
export function recordAudit(tx: DatabaseTransactionConnection, draft: AuditDraft): Promise<string> {
  return enqueueEvent(tx, auditEventOf(draft));
}

/**
 * The outbox event of an audit record, for a caller that writes it with its other events in one
 * statement (enqueueEvents); the same transaction rule as recordAudit holds.
 */
export function auditEventOf(draft: AuditDraft): EventInput {
  const { tenantId, source, traceId, ...given } = draft;
  // A record written while a Platform Owner impersonates a user names the impersonator, whoever wrote it.
  const fields = { ...given, impersonatorId: given.impersonatorId ?? currentRequestContext()?.impersonatorId ?? null };
  return {
    tenantId,
    type: AUDIT_EVENT_TYPE,
    source,
    topic: topics.audit.name,
    key: draft.entityId,
    data: auditPayloadOrThrow(fields),
    schemaVersion: AUDIT_SCHEMA_VERSION,
    traceId: traceId ?? undefined,
  };
}

/** The writer as the event bus takes it (services/events/audit-trail.ts): audit sits above the bus, so it is passed in. */
export const auditTrail: AuditTrail = { record: recordAudit, eventOf: auditEventOf };
