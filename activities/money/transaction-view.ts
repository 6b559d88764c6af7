import type { TransactionRow } from '../../db/queries/money/transactions.queries';
import type { TransactionView } from '../../workflows/money/money.messages';

/** A transaction row as the API shows it (and as the idempotency key stores it). */
export function transactionView(row: TransactionRow): TransactionView {
  return {
    transactionId: row.id,
    id: row.id,
    walletId: row.walletId,
    type: row.type,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    reason: row.reason,
    idempotencyKey: row.idempotencyKey,
    referenceTransactionId: row.referenceTransactionId,
    counterpartyWalletId: row.counterpartyWalletId,
    reversed: row.reversed,
    meta: row.meta,
    balanceAfter: row.balanceAfter,
    expiresAt: row.expiresAt,
    expiredAt: row.expiredAt,
    createdAt: row.createdAt,
  };
}
