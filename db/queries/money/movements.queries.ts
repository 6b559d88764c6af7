import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import type { Posting } from './ledger.queries';
import { transactionColumns, transactionRow, type NewTransaction, type TransactionRow } from './transactions.queries';
import type { BalanceDelta, Balances } from './wallets.queries';

/**
 * One wallet's side of a money operation in ONE statement (a round trip instead of three): the
 * balance change, the transaction row carrying the balances after it, and the transaction's
 * postings. The caller holds the wallet's lock (lockWallets) and has checked the business rules;
 * the CHECK constraints on wallets and the deferred ledger_postings_balanced trigger still guard.
 * Foreign keys between the three rows are checked at the end of the statement, after all of them.
 * created_at is cut to milliseconds, the precision timestamps leave the database with (db/pool.ts),
 * so a history page token holding it finds the row again exactly.
 */
export interface MovementWrite {
  walletId: string;
  delta: BalanceDelta;
  transaction: Omit<NewTransaction, 'walletId' | 'currency' | 'balanceAfter'>;
  postings: readonly Posting[];
}

const movedRow = transactionRow.extend({ walletUpdatedAt: z.string() });

export interface MovedRows {
  transaction: TransactionRow;
  /** The wallet's balances after the change (the transaction's balanceAfter), and its new updated_at. */
  wallet: Balances & { updatedAt: string };
}

export async function writeMovement(tx: DatabaseTransactionConnection, write: MovementWrite): Promise<MovedRows> {
  const row = write.transaction;
  const { walletUpdatedAt, ...transaction } = await tx.one(sql.type(movedRow)`
    WITH wallet AS (
      UPDATE wallets
      SET available = available + ${write.delta.available ?? 0},
          pending = pending + ${write.delta.pending ?? 0},
          frozen = frozen + ${write.delta.frozen ?? 0},
          updated_at = now()
      WHERE id = ${write.walletId}
      RETURNING id, currency, available, pending, frozen, updated_at
    ), moved AS (
      INSERT INTO money_transactions (
        id, tenant_id, wallet_id, type, status, amount, currency, reason, idempotency_key,
        reference_transaction_id, counterparty_wallet_id, meta, balance_after, expires_at, created_at, updated_at)
      SELECT
        ${row.id}, ${row.tenantId}, wallet.id, ${row.type}, ${row.status}, ${row.amount}, wallet.currency,
        ${row.reason}, ${row.idempotencyKey}, ${row.referenceTransactionId ?? null}, ${row.counterpartyWalletId ?? null},
        ${sql.jsonb(row.meta as Parameters<typeof sql.jsonb>[0])},
        jsonb_build_object('available', wallet.available, 'pending', wallet.pending, 'frozen', wallet.frozen),
        ${row.expiresAt ?? null}::timestamptz, date_trunc('milliseconds', now()), date_trunc('milliseconds', now())
      FROM wallet
      RETURNING ${transactionColumns}
    ), posted AS (
      INSERT INTO ledger_postings (tenant_id, transaction_id, wallet_id, bucket, currency, amount)
      SELECT ${row.tenantId}, ${row.id}, p.wallet_id, p.bucket, wallet.currency, p.amount
      FROM wallet, jsonb_to_recordset(${sql.jsonb(write.postings.map((p) => ({ wallet_id: p.walletId, bucket: p.bucket, amount: p.amount })))})
        AS p (wallet_id text, bucket text, amount bigint)
    )
    SELECT moved.*, wallet.updated_at AS "walletUpdatedAt"
    FROM moved, wallet
  `);
  return { transaction, wallet: { ...transaction.balanceAfter, updatedAt: walletUpdatedAt } };
}
