import type { Logger } from '../../../common/logger';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import { selectTenantOwner } from '../../../db/queries/identity/platform.queries';
import { selectUserTenants } from '../../../db/queries/identity/tenants.queries';
import type { IdentityDeps } from '../deps';
import { recordAccountAudit } from './audit';

export interface RecoveryLockoutAlert {
  /**
   * recovery-locked: recovery is locked for an hour; the account's tenant owners are told someone is
   * trying its recovery codes. account-locked: the account is locked; the platform admin is to be told.
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
 * The part of a recovery lockout's alert that belongs to the lock's transaction: an audit record (so
 * the alert exists exactly when the lock does) and an error-level log line for operators. The owners'
 * e-mail follows the commit (mailRecoveryLockAlert).
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
      ? 'recovery locked after repeated wrong recovery codes; tenant owners alerted by e-mail'
      : 'account locked after repeated wrong recovery codes; platform admin to be alerted',
  );
}

/**
 * A recovery lock alerts the owner (docs/reference/identity.md#rule-22). Called once the lock has committed, so no
 * mail tells of a lock that was rolled back. Every tenant the account belongs to may be affected by
 * whoever holds its password, so the owner of each one is told (an owner of several of them once).
 * The idempotency key names the lock (its end) and the recipient: a repeated call is one mail each.
 * A failure to hand the mail over is logged and does not change the answer: the lock and its audit
 * record stand.
 */
export async function mailRecoveryLockAlert(
  deps: Pick<IdentityDeps, 'db' | 'mailer' | 'logger'>, alert: RecoveryLockoutAlert & { lockedUntil: string },
): Promise<void> {
  try {
    const tenants = await selectUserTenants(deps.db, alert.userId);
    const owners = new Map<string, { email: string; tenantId: string; tenantName: string }>();
    for (const tenant of tenants) {
      const owner = await withTenant(deps.db, tenant.id, (tx) => selectTenantOwner(tx));
      if (owner && !owners.has(owner.id)) owners.set(owner.id, { email: owner.email, tenantId: tenant.id, tenantName: tenant.name });
    }
    const lockId = Date.parse(alert.lockedUntil);
    await Promise.all([...owners].map(([ownerId, { email, tenantId, tenantName }]) => deps.mailer.send({
      to: email,
      template: 'recovery-locked',
      data: { account: alert.email, tenantName, lockedUntil: alert.lockedUntil },
    }, `recovery-locked:${alert.userId}:${lockId}:${ownerId}`, tenantId)));
  } catch (err) {
    deps.logger.error({ err, userId: alert.userId, lockedUntil: alert.lockedUntil }, 'the recovery-lock alert mail could not be handed over');
  }
}
