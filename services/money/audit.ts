import { auditEventOf } from '../audit/writer';
import type { EventInput } from '../events/publish';
import type { TransactionRow } from '../../db/queries/money/transactions.queries';
import type { WalletRow } from '../../db/queries/money/wallets.queries';
import type { MoneyActor } from './movements';

/**
 * The audit record of a money operation (docs/reference/money.md#rule-16: every operation), as the outbox
 * event written in the operation's own transaction (see MoneyChange). The entity is the transaction
 * written; `before`/`after` are the wallet's balances, so the trail alone explains every balance. Actions are money.<entity>.<verb>: money.wallet.created,
 * money.transaction.credited, .debited, .reversed (h7: .held, .confirmed, .canceled, .expired, .transferred).
 */
export function moneyAudit(
  actor: MoneyActor,
  action: string,
  change: { before: WalletRow | null; after: WalletRow; transaction?: TransactionRow; meta?: Record<string, unknown> },
): EventInput {
  const balance = (wallet: WalletRow) => ({
    walletId: wallet.id, currency: wallet.currency, available: wallet.available, pending: wallet.pending, frozen: wallet.frozen,
  });
  const transaction = change.transaction;
  return auditEventOf({
    tenantId: actor.tenantId,
    source: 'money',
    action,
    entityType: transaction ? 'money_transaction' : 'wallet',
    entityId: transaction ? transaction.id : change.after.id,
    actorId: actor.actorId,
    before: change.before && balance(change.before),
    after: balance(change.after),
    meta: {
      ...(transaction && {
        walletId: transaction.walletId, type: transaction.type, status: transaction.status, amount: transaction.amount,
        currency: transaction.currency, reason: transaction.reason, idempotencyKey: transaction.idempotencyKey,
        referenceTransactionId: transaction.referenceTransactionId,
      }),
      ...(!transaction && { userId: change.after.userId, label: change.after.label }),
      ...change.meta,
    },
    traceId: actor.traceId,
  });
}
