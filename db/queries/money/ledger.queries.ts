import { sql, type DatabaseTransactionConnection } from '../../pool';

export type LedgerBucket = 'available' | 'pending' | 'frozen';

/**
 * One side of a double entry: a wallet bucket, or the tenant's external account (walletId null) for
 * money entering or leaving the platform. Signed: positive increases the bucket.
 */
export interface Posting {
  walletId: string | null;
  bucket: LedgerBucket | 'external';
  amount: number;
}

/**
 * Writes a transaction's postings in the caller's transaction, next to the balance change they
 * explain. They must sum to zero per currency; the deferred ledger_postings_balanced trigger refuses
 * the commit otherwise.
 */
export async function insertPostings(
  tx: DatabaseTransactionConnection,
  entry: { tenantId: string; transactionId: string; currency: string; postings: readonly Posting[] },
): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO ledger_postings (tenant_id, transaction_id, wallet_id, bucket, currency, amount)
    SELECT ${entry.tenantId}, ${entry.transactionId}, p.wallet_id, p.bucket, ${entry.currency}, p.amount
    FROM jsonb_to_recordset(${sql.jsonb(entry.postings.map((p) => ({ wallet_id: p.walletId, bucket: p.bucket, amount: p.amount })))})
      AS p (wallet_id text, bucket text, amount bigint)
  `);
}
