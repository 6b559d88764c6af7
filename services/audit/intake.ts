import type { AcceptedAuditRecord } from './record-publisher';
import type { AuditDraft } from './writer';
import { problems } from '../../common/problems';
import type { AuditDeps } from './deps';

/** docs/reference/audit.md#rule-6: records per batch. */
export const AUDIT_BATCH_MAX = 500;

/** What a client may say about a record (docs/reference/audit.md, Resources: write body). */
export interface AuditWriteBody {
  action: string;
  entityType: string;
  entityId: string;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  meta?: Record<string, unknown> | null;
}

/**
 * Who and where a record comes from: never from the client's body (docs/reference/audit.md#rule-4),
 * always from the request being served: the verified token (tenant, actor), the connection (IP as
 * Koa reports it, user agent header) and the request's trace.
 */
export interface AuditRequestOrigin {
  tenantId: string;
  actorId: string;
  actorIp: string | null;
  actorUserAgent: string | null;
  traceId: string;
}

/** Source of the envelope of records written through the REST intake. */
const SOURCE = 'audit-api';

export function draftOf(body: AuditWriteBody, origin: AuditRequestOrigin): AuditDraft {
  return {
    tenantId: origin.tenantId,
    source: SOURCE,
    traceId: origin.traceId,
    action: body.action,
    entityType: body.entityType,
    entityId: body.entityId,
    actorId: origin.actorId,
    actorIp: origin.actorIp,
    actorUserAgent: origin.actorUserAgent,
    impersonatorId: null,
    before: body.before ?? null,
    after: body.after ?? null,
    meta: body.meta ?? null,
  };
}

/**
 * Hands the records to the intake and answers at once with their ids (the 202 of docs/reference/audit.md#rule-3):
 * the intake waits at most for Kafka's acknowledgement (bounded by AUDIT_PUBLISH_TIMEOUT_MS),
 * falling back to the durable buffer, and never for the store.
 */
export function acceptAuditRecords(
  deps: AuditDeps, bodies: readonly AuditWriteBody[], origin: AuditRequestOrigin,
): Promise<AcceptedAuditRecord[]> {
  if (bodies.length > AUDIT_BATCH_MAX) throw problems.batchLimitExceeded(AUDIT_BATCH_MAX, bodies.length);
  return deps.intake.publishAuditRecords(bodies.map((body) => draftOf(body, origin)));
}
