import { newId } from '../ids';
import { insertPostings, type Posting } from '../../db/queries/money/ledger.queries';
import {
  insertTransaction, type NewTransaction, type TransactionRow,
} from '../../db/queries/money/transactions.queries';
import { updateBalances, type BalanceDelta, type WalletRow } from '../../db/queries/money/wallets.queries';
import type { DatabaseTransactionConnection } from '../../db/pool';

/**
 * Who a money operation runs for. The gateway builds it from the verified token; a workflow
 * activity from its arguments (workflows pass the original caller along).
 */
export interface MoneyActor {
  tenantId: string;
  /** The user who asked; null for the platform itself (a hold's timer). */
  actorId: string | null;
  traceId?: string;
}

/**
 * One wallet's side of an operation: its balance change, the transaction row that explains it and
 * the ledger postings that prove it. The caller has locked the wallet (lockWallets) and checked
 * the business rules; this writes the three together, in the caller's database transaction.
 */
export interface Movement {
  /** The locked wallet as read under the lock. */
  wallet: WalletRow;
  delta: BalanceDelta;
  transaction: Omit<NewTransaction, 'id' | 'tenantId' | 'walletId' | 'currency' | 'balanceAfter'> & { id?: string };
  /**
   * Balanced postings of this transaction (they must sum to zero; checked at commit). Empty for the
   * second row of a transfer, whose postings (both wallets) hang on the first row.
   */
  postings: readonly Posting[];
}

export interface RecordedMovement {
  wallet: WalletRow;
  transaction: TransactionRow;
}

/** Applies the balance change, then writes the transaction row with balanceAfter and its postings. */
export async function recordMovement(tx: DatabaseTransactionConnection, actor: MoneyActor, movement: Movement): Promise<RecordedMovement> {
  const wallet = await updateBalances(tx, movement.wallet.id, movement.delta);
  const transaction = await insertTransaction(tx, {
    ...movement.transaction,
    id: movement.transaction.id ?? newId(),
    tenantId: actor.tenantId,
    walletId: wallet.id,
    currency: wallet.currency,
    balanceAfter: { available: wallet.available, pending: wallet.pending, frozen: wallet.frozen },
  });
  if (movement.postings.length > 0) {
    await insertPostings(tx, { tenantId: actor.tenantId, transactionId: transaction.id, currency: wallet.currency, postings: movement.postings });
  }
  return { wallet, transaction };
}

/**
 * The postings conventions (signed, positive increases the bucket; `external` is the tenant's
 * account for money entering or leaving the platform). Every pair sums to zero.
 */
export const postings = {
  /** credit, and the reversal of a debit or a confirmed hold: money comes in. */
  credit: (walletId: string, amount: number): Posting[] => [
    { walletId, bucket: 'available', amount }, { walletId: null, bucket: 'external', amount: -amount },
  ],
  /** debit: money leaves. */
  debit: (walletId: string, amount: number): Posting[] => [
    { walletId, bucket: 'available', amount: -amount }, { walletId: null, bucket: 'external', amount },
  ],
  /** hold: available to frozen. */
  hold: (walletId: string, amount: number): Posting[] => [
    { walletId, bucket: 'available', amount: -amount }, { walletId, bucket: 'frozen', amount },
  ],
  /** confirm: the frozen funds leave the platform. */
  confirm: (walletId: string, amount: number): Posting[] => [
    { walletId, bucket: 'frozen', amount: -amount }, { walletId: null, bucket: 'external', amount },
  ],
  /** cancel (and expiry): frozen back to available. */
  cancel: (walletId: string, amount: number): Posting[] => [
    { walletId, bucket: 'frozen', amount: -amount }, { walletId, bucket: 'available', amount },
  ],
  /** transfer: from one wallet's available to another's. */
  transfer: (fromWalletId: string, toWalletId: string, amount: number): Posting[] => [
    { walletId: fromWalletId, bucket: 'available', amount: -amount }, { walletId: toWalletId, bucket: 'available', amount },
  ],
};
