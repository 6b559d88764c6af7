import type { DatabasePool } from '../../db/pool';
import {
  beginSnapshot, selectCurrencyImbalances, selectForeignCurrencyPostings, selectLedgerTotals,
  selectTransactionImbalances, selectWalletMismatches,
} from '../../db/queries/money/ledger-check.queries';

/**
 * The ledger invariant of issue 6: for each currency the postings sum to zero, every transaction's
 * postings balance, every posting on a wallet is in the wallet's currency, and each wallet's
 * available, pending and frozen balances equal the sums of its postings per bucket. One snapshot
 * (REPEATABLE READ) as the owner role, across tenants or for one.
 */
export interface LedgerReport {
  ok: boolean;
  totals: { wallets: number; transactions: number; postings: number };
  /** One line per violation found (at most `limit` per check). */
  violations: string[];
}

export async function checkLedger(
  owner: DatabasePool,
  options: { tenantId?: string; limit?: number; progress?: (line: string) => void } = {},
): Promise<LedgerReport> {
  const tenantId = options.tenantId ?? null;
  const limit = options.limit ?? 100;
  const progress = options.progress ?? (() => undefined);
  return owner.transaction(async (tx) => {
    await beginSnapshot(tx);
    const totals = await selectLedgerTotals(tx, tenantId);
    progress(`ledger: ${totals.wallets} wallet(s), ${totals.transactions} transaction(s), ${totals.postings} posting(s)`);
    const violations: string[] = [];
    const step = async <T>(name: string, rows: Promise<readonly T[]>, describe: (row: T) => string) => {
      const started = Date.now();
      const found = await rows;
      violations.push(...found.map(describe));
      progress(`  ${name}: ${found.length === 0 ? 'ok' : `${found.length} violation(s)`} (${Date.now() - started} ms)`);
    };
    await step('postings sum to zero per currency', selectCurrencyImbalances(tx, tenantId, limit),
      (row) => `currency ${row.currency}: postings sum to ${row.sum}, not 0`);
    await step('every transaction balances', selectTransactionImbalances(tx, tenantId, limit),
      (row) => `transaction ${row.transactionId} (${row.currency}): postings sum to ${row.sum}, not 0`);
    await step('postings in the wallet’s currency', selectForeignCurrencyPostings(tx, tenantId, limit),
      (row) => `posting ${row.postingId} on wallet ${row.walletId}: ${row.currency}, the wallet holds ${row.walletCurrency}`);
    await step('wallet balances equal their postings', selectWalletMismatches(tx, tenantId, limit),
      (row) => `wallet ${row.walletId} (tenant ${row.tenantId}) ${row.bucket}: balance ${row.balance}, postings ${row.postings}`);
    return { ok: violations.length === 0, totals, violations };
  });
}
