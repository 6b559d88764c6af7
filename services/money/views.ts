import type { TransactionRow } from '../../db/queries/money/transactions.queries';
import type { Balances, WalletRow } from '../../db/queries/money/wallets.queries';

/**
 * The money resources as the API shows them (docs/reference/money.md, Resources: wallet and transaction; camelCase). The
 * gateway answers with them and stores them as idempotent answers; workflow activities store the same
 * shapes, so a replay through either path answers the same bytes.
 */

export interface WalletView {
  id: string;
  tenantId: string;
  userId: string;
  currency: string;
  label: string;
  balance: Balances;
  createdAt: string;
  updatedAt: string;
}

export function walletView(wallet: WalletRow): WalletView {
  return {
    id: wallet.id,
    tenantId: wallet.tenantId,
    userId: wallet.userId,
    currency: wallet.currency,
    label: wallet.label,
    balance: balanceView(wallet),
    createdAt: wallet.createdAt,
    updatedAt: wallet.updatedAt,
  };
}

export function balanceView(wallet: Balances): Balances {
  return { available: wallet.available, pending: wallet.pending, frozen: wallet.frozen };
}

export interface TransactionView {
  id: string;
  walletId: string;
  type: TransactionRow['type'];
  status: TransactionRow['status'];
  amount: number;
  currency: string;
  reason: string;
  idempotencyKey: string | null;
  referenceTransactionId: string | null;
  reversed: boolean;
  meta: Record<string, unknown>;
  balanceAfter: Balances;
  createdAt: string;
  /** The other wallet of a transfer; absent otherwise. */
  counterpartyWalletId?: string;
  /** Holds: when the hold expires; absent otherwise. */
  expiresAt?: string;
}

export function transactionView(row: TransactionRow): TransactionView {
  return {
    id: row.id,
    walletId: row.walletId,
    type: row.type,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    reason: row.reason,
    idempotencyKey: row.idempotencyKey,
    referenceTransactionId: row.referenceTransactionId,
    reversed: row.reversed,
    meta: row.meta,
    balanceAfter: row.balanceAfter,
    createdAt: row.createdAt,
    ...(row.counterpartyWalletId !== null && { counterpartyWalletId: row.counterpartyWalletId }),
    ...(row.expiresAt !== null && { expiresAt: row.expiresAt }),
  };
}

/** The answer of a money mutation (docs/reference/money.md, Resources: credit and debit): the transaction in short. */
export interface OperationResult {
  transactionId: string;
  type: TransactionRow['type'];
  status: TransactionRow['status'];
  amount: number;
  currency: string;
  balanceAfter: Balances;
  createdAt: string;
}

export function operationResult(row: TransactionRow): OperationResult {
  return {
    transactionId: row.id,
    type: row.type,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    balanceAfter: row.balanceAfter,
    createdAt: row.createdAt,
  };
}
