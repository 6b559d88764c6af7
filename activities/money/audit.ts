import { recordAudit } from '../../common/audit/writer';
import { activityContext } from '../../common/temporal/activity-context';
import type { DatabaseTransactionConnection } from '../../db/pool';
import type { TransactionRow } from '../../db/queries/money/transactions.queries';
import { transactionView } from './transaction-view';

/**
 * The audit record of a money operation (document 2, Money rule 5), in the operation's transaction.
 * The entity is the wallet; the actor and trace are those of the request the workflow carried to the
 * activity (common/temporal/activity-context.ts), unless the operation is the system's own.
 */
export async function auditMoneyOperation(
  tx: DatabaseTransactionConnection,
  action: string,
  row: TransactionRow,
  meta: Record<string, unknown> = {},
  override: { actorId?: null } = {},
): Promise<void> {
  const context = activityContext();
  await recordAudit(tx, {
    tenantId: row.tenantId, source: 'money', action, entityType: 'wallet', entityId: row.walletId,
    actorId: 'actorId' in override ? null : context.actorId ?? null, traceId: context.traceId,
    after: { ...transactionView(row) }, meta: { transactionId: row.id, ...meta },
  });
}
