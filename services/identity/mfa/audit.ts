import { recordAudit } from '../../audit/writer';
import { currentRequestContext } from '../../../common/context';
import type { DatabaseTransactionConnection } from '../../../db/pool';

export interface AccountAudit {
  tenantId: string;
  userId: string;
  /** `auth.mfa.enabled`, `auth.recovery.used` ... */
  action: string;
  ip?: string;
  meta?: Record<string, unknown>;
}

/**
 * An audit record about the account's own security settings, in the transaction of the change. The
 * account acts on itself; an impersonating operator is named when there is one.
 */
export function recordAccountAudit(tx: DatabaseTransactionConnection, audit: AccountAudit): Promise<string> {
  const context = currentRequestContext();
  return recordAudit(tx, {
    tenantId: audit.tenantId,
    source: 'identity',
    traceId: context?.traceId,
    action: audit.action,
    entityType: 'user',
    entityId: audit.userId,
    actorId: audit.userId,
    actorIp: audit.ip ?? null,
    impersonatorId: context?.impersonatorId ?? null,
    meta: audit.meta ?? null,
  });
}
