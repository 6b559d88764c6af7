import type { AuditRecord } from './record';

/**
 * The masking rule of the view `audit_records_readable` (migration 0008), for records that are read
 * from somewhere the view cannot reach: the cold archive. A cold export restores archived months
 * from the object store, and those records must come out exactly as the hot path shows them.
 * The anonymized users are those of `audit_anonymized_users`, which stays in PostgreSQL for ever
 * (it is never archived), so it is the one truth for hot and cold records alike.
 *
 * Keep this in step with the view: test/integration/audit-anonymization-mask.int.test.ts checks
 * the two against each other record by record.
 */

/** The action of the ANONYMIZE records (services/audit/anonymize.ts), whose own meta is never masked. */
export const ANONYMIZE_ACTION = 'audit.record.anonymized';
const ANONYMIZED_ID = 'anonymized';
const ANONYMIZED_SNAPSHOT = Object.freeze({ anonymized: true });

/** userId → masked_until in epoch milliseconds (records with a timestamp up to it are masked). */
export type AnonymizedUsers = ReadonlyMap<string, number>;

function maskedAt(users: AnonymizedUsers, userId: string | null, timestampMs: number): boolean {
  if (userId === null) return false;
  const until = users.get(userId);
  return until !== undefined && timestampMs <= until;
}

/**
 * The record as the view would show it. Records with a millisecond timestamp compare with the
 * microsecond masked_until exactly when masked_until is floored to milliseconds, which is what
 * the query gives us.
 */
export function maskAnonymized<T extends AuditRecord>(record: T, users: AnonymizedUsers): T {
  if (users.size === 0 || record.action.startsWith('money.')) return record;
  const at = Date.parse(record.timestamp);
  const actor = maskedAt(users, record.actorId, at);
  const impersonator = maskedAt(users, record.impersonatorId, at);
  const subject = record.action !== ANONYMIZE_ACTION && record.entityType === 'user' && maskedAt(users, record.entityId, at);
  if (!actor && !impersonator && !subject) return record;
  const snapshot = (value: Record<string, unknown> | null) => (subject && value !== null ? { ...ANONYMIZED_SNAPSHOT } : value);
  return {
    ...record,
    actorId: actor ? ANONYMIZED_ID : record.actorId,
    actorIp: actor || impersonator ? null : record.actorIp,
    actorUserAgent: actor || impersonator ? null : record.actorUserAgent,
    impersonatorId: impersonator ? ANONYMIZED_ID : record.impersonatorId,
    before: snapshot(record.before),
    after: snapshot(record.after),
    meta: snapshot(record.meta),
  };
}
