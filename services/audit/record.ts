import { z } from 'zod';
import type { EventEnvelope } from '../../common/event-envelope';
import { problems, type FieldError } from '../../common/problems';

/**
 * The audit record (docs/reference/audit.md, Resources) as it travels: the record's own fields are the
 * `data` of an event (docs/reference/audit.md, Events) of type `audit.record.created` on
 * platform.audit.events, keyed by entity id. The envelope supplies the rest: its id is the record id, and
 * tenantId, traceId and timestamp are the injected fields. The same schema checks a record on the way in
 * (writer, intake) and on the way out of Kafka (consumer), so a record accepted at intake is never refused
 * by the store.
 */

export const AUDIT_EVENT_TYPE = 'audit.record.created';
export const AUDIT_SCHEMA_VERSION = '1.0.0';

const snapshot = z.record(z.string(), z.unknown()).nullable().default(null);
const optionalText = z.string().nullable().default(null);

export const auditPayloadSchema = z.strictObject({
  /** domain.entity.verb; its exact grammar is the intake route's concern. */
  action: z.string().min(1).max(200),
  entityType: z.string().min(1).max(100),
  entityId: z.string().min(1).max(200),
  actorId: optionalText,
  actorIp: optionalText,
  actorUserAgent: optionalText,
  /** Set when a platform operator acts as a user (the identity issue's impersonation). */
  impersonatorId: optionalText,
  /** Snapshots: before is absent on creation, after on deletion. */
  before: snapshot,
  after: snapshot,
  meta: snapshot,
});

/** What a service says happened; every field as the payload schema allows it. */
export type AuditPayload = z.infer<typeof auditPayloadSchema>;
export type AuditPayloadInput = z.input<typeof auditPayloadSchema>;

/** A record as the store keeps and hashes it (seq and hashes are added by the chain). */
export interface AuditRecord extends AuditPayload {
  id: string;
  tenantId: string;
  traceId: string | null;
  /** ISO 8601 in UTC with milliseconds: what timestamptz gives back, so the hash survives storage. */
  timestamp: string;
}

/**
 * PostgreSQL text and jsonb cannot hold U+0000 nor a lone UTF-16 surrogate; a record with either
 * would fail its insert over and over, so it is refused before it is queued. JSON.stringify writes
 * exactly these as \u escapes (U+0000 as \u0000, a lone surrogate as \udXXX), and an escape is real
 * when an even number of backslashes precedes it.
 */
const UNSTORABLE_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/;

function isStorable(payload: AuditPayload): boolean {
  return !UNSTORABLE_ESCAPE.test(JSON.stringify(payload));
}

export type PayloadCheck = { ok: true; payload: AuditPayload } | { ok: false; errors: FieldError[] };

/** Checks a record's own fields; every mistake is named at once. */
export function checkAuditPayload(input: unknown): PayloadCheck {
  const parsed = auditPayloadSchema.safeParse(input);
  if (!parsed.success) {
    return {
      ok: false,
      errors: parsed.error.issues.map((issue) => ({
        field: issue.path.join('.') || 'record', code: issue.code, message: issue.message,
      })),
    };
  }
  if (!isStorable(parsed.data)) {
    return { ok: false, errors: [{ field: 'record', code: 'unstorable', message: 'Text may not contain U+0000 or a lone UTF-16 surrogate' }] };
  }
  return { ok: true, payload: parsed.data };
}

/** The payload of a record about to be queued, or a validation problem naming what is wrong. */
export function auditPayloadOrThrow(input: AuditPayloadInput): AuditPayload {
  const checked = checkAuditPayload(input);
  if (!checked.ok) throw problems.validation(checked.errors, 'The audit record is not valid');
  return checked.payload;
}

/** Milliseconds in UTC: the precision a stored timestamp is read back with. */
export function normalizeTimestamp(iso: string): string {
  return new Date(iso).toISOString();
}

export type RecordFromEvent = { ok: true; record: AuditRecord } | { ok: false; reason: string };

/** The stored form of an audit event's envelope; a malformed payload is named, not thrown. */
export function auditRecordFromEnvelope(envelope: EventEnvelope): RecordFromEvent {
  if (envelope.type !== AUDIT_EVENT_TYPE) return { ok: false, reason: `event type ${envelope.type} is not ${AUDIT_EVENT_TYPE}` };
  const checked = checkAuditPayload(envelope.data);
  if (!checked.ok) return { ok: false, reason: checked.errors.map((e) => `${e.field}: ${e.message}`).join('; ') };
  return {
    ok: true,
    record: {
      id: envelope.id,
      tenantId: envelope.tenantId,
      traceId: envelope.traceId,
      timestamp: normalizeTimestamp(envelope.timestamp),
      ...checked.payload,
    },
  };
}
