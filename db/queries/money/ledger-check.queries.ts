import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * The ledger invariant's queries (npm run ledger:verify, test/helpers/ledger.ts), run by the owner
 * role across tenants inside one REPEATABLE READ snapshot, so operations committing meanwhile never
 * show half. Each returns at most `limit` offending rows; `tenantId` narrows to one tenant (null: all).
 */

const scope = (tenantId: string | null, column = sql.fragment`tenant_id`) =>
  (tenantId ? sql.fragment`${column} = ${tenantId}` : sql.fragment`TRUE`);

/** Starts the snapshot: the first statement of the checking transaction. */
export async function beginSnapshot(tx: DatabaseTransactionConnection): Promise<void> {
  await tx.query(sql.unsafe`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
}

const totals = z.object({ wallets: z.number(), transactions: z.number(), postings: z.number() });

export function selectLedgerTotals(tx: DatabaseTransactionConnection, tenantId: string | null) {
  return tx.one(sql.type(totals)`
    SELECT (SELECT count(*) FROM wallets WHERE ${scope(tenantId)}) AS wallets,
           (SELECT count(*) FROM money_transactions WHERE ${scope(tenantId)}) AS transactions,
           (SELECT count(*) FROM ledger_postings WHERE ${scope(tenantId)}) AS postings
  `);
}

const currencyImbalance = z.object({ currency: z.string(), sum: z.number() });

/** Currencies whose postings do not sum to zero (money created or destroyed). */
export function selectCurrencyImbalances(tx: DatabaseTransactionConnection, tenantId: string | null, limit: number) {
  return tx.any(sql.type(currencyImbalance)`
    SELECT currency, sum(amount)::bigint AS sum FROM ledger_postings WHERE ${scope(tenantId)}
    GROUP BY currency HAVING sum(amount) <> 0 ORDER BY currency LIMIT ${limit}
  `);
}

const transactionImbalance = z.object({ transactionId: z.string(), currency: z.string(), sum: z.number() });

/** Transactions whose own postings do not balance (the commit trigger should make this impossible). */
export function selectTransactionImbalances(tx: DatabaseTransactionConnection, tenantId: string | null, limit: number) {
  return tx.any(sql.type(transactionImbalance)`
    SELECT transaction_id AS "transactionId", currency, sum(amount)::bigint AS sum FROM ledger_postings
    WHERE ${scope(tenantId)}
    GROUP BY transaction_id, currency HAVING sum(amount) <> 0 ORDER BY transaction_id LIMIT ${limit}
  `);
}

const walletMismatch = z.object({
  walletId: z.string(),
  tenantId: z.string(),
  bucket: z.enum(['available', 'pending', 'frozen']),
  balance: z.number(),
  postings: z.number(),
});
export type WalletMismatch = z.infer<typeof walletMismatch>;

/** Wallet balances that differ from the sum of the wallet's postings in that bucket. */
export function selectWalletMismatches(tx: DatabaseTransactionConnection, tenantId: string | null, limit: number) {
  return tx.any(sql.type(walletMismatch)`
    WITH sums AS (
      SELECT wallet_id,
             coalesce(sum(amount) FILTER (WHERE bucket = 'available'), 0) AS available,
             coalesce(sum(amount) FILTER (WHERE bucket = 'pending'), 0) AS pending,
             coalesce(sum(amount) FILTER (WHERE bucket = 'frozen'), 0) AS frozen
      FROM ledger_postings WHERE wallet_id IS NOT NULL AND ${scope(tenantId)}
      GROUP BY wallet_id
    )
    SELECT w.id AS "walletId", w.tenant_id AS "tenantId", b.bucket, b.balance, b.postings
    FROM wallets w
    LEFT JOIN sums s ON s.wallet_id = w.id
    CROSS JOIN LATERAL (VALUES
      ('available', w.available, coalesce(s.available, 0)),
      ('pending', w.pending, coalesce(s.pending, 0)),
      ('frozen', w.frozen, coalesce(s.frozen, 0))
    ) AS b (bucket, balance, postings)
    WHERE ${scope(tenantId, sql.fragment`w.tenant_id`)} AND b.balance <> b.postings
    ORDER BY w.id, b.bucket LIMIT ${limit}
  `);
}

const foreignCurrency = z.object({ postingId: z.number(), walletId: z.string(), currency: z.string(), walletCurrency: z.string() });

/** Postings on a wallet in another currency than the wallet's. */
export function selectForeignCurrencyPostings(tx: DatabaseTransactionConnection, tenantId: string | null, limit: number) {
  return tx.any(sql.type(foreignCurrency)`
    SELECT p.id AS "postingId", p.wallet_id AS "walletId", p.currency, w.currency AS "walletCurrency"
    FROM ledger_postings p JOIN wallets w ON w.id = p.wallet_id
    WHERE p.currency <> w.currency AND ${scope(tenantId, sql.fragment`p.tenant_id`)}
    ORDER BY p.id LIMIT ${limit}
  `);
}
