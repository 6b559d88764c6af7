import type { Logger } from '../../../common/logger';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import { recordAccountAudit } from './audit';

export interface RecoveryLockoutAlert {
  /**
   * recovery-locked: recovery is locked for an hour; the account's owner is to be told someone is
   * trying their recovery codes. account-locked: the account is locked; the platform admin is to be told.
   */
  kind: 'recovery-locked' | 'account-locked';
  tenantId: string;
  userId: string;
  email: string;
  totalFailures: number;
  /** ISO 8601, for recovery-locked. */
  lockedUntil?: string;
  ip: string;
}

const ACTIONS = { 'recovery-locked': 'auth.recovery.locked', 'account-locked': 'auth.account.locked' } as const;

/**
 * The one place a recovery lockout raises its alert: an audit record in the transaction that
 * records the lock (so the alert exists exactly when the lock does) and an error-level log line
 * for operators. E-mail to the account owner (recovery-locked) and to the platform admin
 * (account-locked) is to be sent from here too once the mailer exists.
 */
export async function raiseRecoveryLockoutAlert(
  tx: DatabaseTransactionConnection, logger: Logger, alert: RecoveryLockoutAlert,
): Promise<void> {
  await recordAccountAudit(tx, {
    tenantId: alert.tenantId, userId: alert.userId, action: ACTIONS[alert.kind], ip: alert.ip,
    meta: {
      alert: alert.kind === 'recovery-locked' ? 'account-owner' : 'platform-admin',
      totalFailures: alert.totalFailures,
      ...(alert.lockedUntil ? { lockedUntil: alert.lockedUntil } : {}),
    },
  });
  logger.error(
    { alert: ACTIONS[alert.kind], userId: alert.userId, tenantId: alert.tenantId, totalFailures: alert.totalFailures, lockedUntil: alert.lockedUntil, ip: alert.ip },
    alert.kind === 'recovery-locked'
      ? 'recovery locked after repeated wrong recovery codes; account owner to be alerted'
      : 'account locked after repeated wrong recovery codes; platform admin to be alerted',
  );
}
