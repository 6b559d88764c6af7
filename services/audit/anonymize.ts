import { ANONYMIZE_ACTION } from './anonymization-mask';
import { recordAudit } from './writer';
import { problems } from '../../common/problems';
import {
  countRecordsToMask, hasFinancialRecords, transactionTime, upsertAnonymizedUser,
} from '../../db/queries/audit/audit-anonymization.queries';
import { withTenant } from '../../db/tenant';
import { anonymizationTiming, withAnonymizationLock } from './anonymization-lock';
import type { AuditDeps } from './deps';
import type { AuditRequestOrigin } from './intake';

/** docs/reference/audit.md#rule-13: 200 {userId, recordsAffected, completedAt}, synchronous. */
export interface AnonymizationResult {
  userId: string;
  recordsAffected: number;
  completedAt: string;
}

/**
 * Anonymizes a user's personal data in the tenant's audit log. The store stays append-only: in one
 * transaction this notes the user in audit_anonymized_users (from its commit on, the view
 * audit_records_readable masks the user's records up to this moment) and appends the ANONYMIZE
 * record through the normal pipeline (the outbox, so the record and the masking commit together).
 * Refused as a whole, with nothing masked, when any money.* record concerns the user (403
 * anonymize-financial-record); a second request for the same user while one runs is 409
 * anonymize-conflict.
 */
export function anonymizeUser(deps: AuditDeps, userId: string, origin: AuditRequestOrigin): Promise<AnonymizationResult> {
  const { tenantId } = origin;
  const { lockSeconds } = anonymizationTiming(deps.config);
  return withAnonymizationLock(deps.db, tenantId, userId, lockSeconds, () => withTenant(deps.db, tenantId, async (tx) => {
    if (await hasFinancialRecords(tx, tenantId, userId)) throw problems.anonymizeFinancialRecord();
    const completedAt = await transactionTime(tx);
    const recordsAffected = await countRecordsToMask(tx, tenantId, userId, completedAt);
    const anonymizationId = await recordAudit(tx, {
      tenantId,
      source: 'audit-api',
      traceId: origin.traceId,
      action: ANONYMIZE_ACTION,
      entityType: 'user',
      entityId: userId,
      actorId: origin.actorId,
      actorIp: origin.actorIp,
      actorUserAgent: origin.actorUserAgent,
      meta: { recordsAffected, maskedUntil: completedAt },
    });
    await upsertAnonymizedUser(tx, tenantId, userId, completedAt, anonymizationId);
    return { userId, recordsAffected, completedAt };
  }));
}
