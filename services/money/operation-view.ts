import type { TransactionRow } from '../../db/queries/money/transactions.queries';
import { transactionView as apiTransactionView } from './views';
import type { TransactionView } from '../../workflows/money/money.messages';

/**
 * A transaction as the hold and transfer workflows answer it (and as the idempotency key stores it):
 * the API's view, with `transactionId` as the operation answers name the id (docs/reference/money.md, Resources), and every
 * optional field present (null when it does not apply), expiredAt included.
 */
export function operationView(row: TransactionRow): TransactionView {
  return {
    ...apiTransactionView(row),
    transactionId: row.id,
    counterpartyWalletId: row.counterpartyWalletId,
    expiresAt: row.expiresAt,
    expiredAt: row.expiredAt,
  };
}
