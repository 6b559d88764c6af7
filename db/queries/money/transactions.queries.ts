import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import { balances, type Balances } from './wallets.queries';

/**
 * Money transactions (migration 0012): one row per operation and wallet, what the API shows. Rows
 * are never deleted; after they are written only their status, `reversed` and the hold timestamps
 * change. Statements run inside withTenant and name the tenant as well (tenant scoping twice), so
another tenant's row is neither read, locked nor changed.
 */

export const TRANSACTION_TYPES = ['credit', 'debit', 'transfer', 'hold', 'confirm', 'cancel', 'reversal'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];
export const TRANSACTION_STATUSES = ['completed', 'pending', 'held', 'failed', 'canceled', 'reversed', 'confirmed'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

export const transactionRow = z.object({
  id: z.string(),
  tenantId: z.string(),
  walletId: z.string(),
  type: z.enum(TRANSACTION_TYPES),
  status: z.enum(TRANSACTION_STATUSES),
  amount: z.number(),
  currency: z.string(),
  reason: z.string(),
  idempotencyKey: z.string().nullable(),
  referenceTransactionId: z.string().nullable(),
  counterpartyWalletId: z.string().nullable(),
  reversed: z.boolean(),
  meta: z.record(z.string(), z.unknown()),
  balanceAfter: balances,
  expiresAt: z.string().nullable(),
  expiredAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type TransactionRow = z.infer<typeof transactionRow>;

export const transactionColumns = sql.fragment`
  id, tenant_id AS "tenantId", wallet_id AS "walletId", type, status, amount, currency, reason,
  idempotency_key AS "idempotencyKey", reference_transaction_id AS "referenceTransactionId",
  counterparty_wallet_id AS "counterpartyWalletId", reversed, meta, balance_after AS "balanceAfter",
  expires_at AS "expiresAt", expired_at AS "expiredAt", created_at AS "createdAt", updated_at AS "updatedAt"
`;

export interface NewTransaction {
  id: string;
  tenantId: string;
  walletId: string;
  type: TransactionType;
  status: TransactionStatus;
  amount: number;
  currency: string;
  reason: string;
  idempotencyKey: string | null;
  referenceTransactionId?: string | null;
  counterpartyWalletId?: string | null;
  meta: Record<string, unknown>;
  balanceAfter: Balances;
  /** Holds only: when the hold's timer fires. */
  expiresAt?: string | null;
}

/** One transaction of the tenant; null for an unknown id or another tenant's. */
export function selectTransaction(tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<TransactionRow | null> {
  return tx.maybeOne(sql.type(transactionRow)`
    SELECT ${transactionColumns} FROM money_transactions WHERE tenant_id = ${tenantId} AND id = ${id}
  `);
}

/**
 * One transaction locked for the rest of the transaction (a reversal, confirm or cancel changes its
 * status). Lock the wallets first (lockWallets), then the transaction, so every path takes its locks
 * in the same order.
 */
export function lockTransaction(tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<TransactionRow | null> {
  return tx.maybeOne(sql.type(transactionRow)`
    SELECT ${transactionColumns} FROM money_transactions WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE
  `);
}

/** A history position: the last row of the previous page. */
export interface HistoryKeyset {
  createdAt: string;
  id: string;
}

export interface HistoryFilter {
  walletId: string;
  type?: TransactionType;
  status?: TransactionStatus;
  /** Inclusive lower bound of createdAt (ISO 8601). */
  since?: string;
  /** Exclusive upper bound of createdAt (ISO 8601). */
  until?: string;
  after?: HistoryKeyset;
  limit: number;
}

/**
 * A page of a wallet's transactions, newest first by (createdAt, id), on the wallet history index.
 * The keyset is written without a row comparison: under row-level security only leakproof
 * operators reach the index (docs/decisions/audit.md).
 */
export function selectTransactionHistory(tx: DatabaseTransactionConnection, filter: HistoryFilter): Promise<readonly TransactionRow[]> {
  const conditions = [
    sql.fragment`wallet_id = ${filter.walletId}`,
    filter.type ? sql.fragment`type = ${filter.type}` : sql.fragment`TRUE`,
    filter.status ? sql.fragment`status = ${filter.status}` : sql.fragment`TRUE`,
    filter.since ? sql.fragment`created_at >= ${filter.since}::timestamptz` : sql.fragment`TRUE`,
    filter.until ? sql.fragment`created_at < ${filter.until}::timestamptz` : sql.fragment`TRUE`,
    filter.after
      ? sql.fragment`created_at <= ${filter.after.createdAt}::timestamptz
          AND (created_at < ${filter.after.createdAt}::timestamptz OR id < ${filter.after.id})`
      : sql.fragment`TRUE`,
  ];
  return tx.any(sql.type(transactionRow)`
    SELECT ${transactionColumns} FROM money_transactions
    WHERE ${sql.join(conditions, sql.fragment` AND `)}
    ORDER BY created_at DESC, id DESC
    LIMIT ${filter.limit}
  `);
}

/** Marks a reversed original (docs/reference/money.md#rule-10): reversed true, status reversed. */
export function markReversed(tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<TransactionRow> {
  return tx.one(sql.type(transactionRow)`
    UPDATE money_transactions SET reversed = true, status = 'reversed', updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${id}
    RETURNING ${transactionColumns}
  `);
}

/** Moves a transaction to another status (a hold to confirmed, canceled; used by the hold workflow's activities). */
export function updateTransactionStatus(
  tx: DatabaseTransactionConnection,
  tenantId: string,
  id: string,
  status: TransactionStatus,
  expiredAt: string | null = null,
): Promise<TransactionRow> {
  return tx.one(sql.type(transactionRow)`
    UPDATE money_transactions
    SET status = ${status}, expired_at = coalesce(${expiredAt}::timestamptz, expired_at), updated_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${id}
    RETURNING ${transactionColumns}
  `);
}
