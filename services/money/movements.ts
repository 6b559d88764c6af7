import type { EventInput } from '../events/publish';
import { newId } from '../../common/ids';
import type { Posting } from '../../db/queries/money/ledger.queries';
import { writeMovement } from '../../db/queries/money/movements.queries';
import type { NewTransaction, TransactionRow } from '../../db/queries/money/transactions.queries';
import type { BalanceDelta, WalletRow } from '../../db/queries/money/wallets.queries';
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

/**
 * A money operation's change, written except for its outbox events (the money event, the audit
 * record): the caller writes those in the same transaction, runIdempotent in one statement with the
 * stored answer (services/idempotency/idempotent.ts), anyone else with enqueueEvents.
 */
export interface MoneyChange {
  transaction: TransactionRow;
  events: EventInput[];
}

export interface RecordedMovement {
  wallet: WalletRow;
  transaction: TransactionRow;
}

/** Applies the balance change and writes the transaction row with balanceAfter and its postings, in one statement. */
export async function recordMovement(tx: DatabaseTransactionConnection, actor: MoneyActor, movement: Movement): Promise<RecordedMovement> {
  const moved = await writeMovement(tx, {
    walletId: movement.wallet.id,
    delta: movement.delta,
    transaction: { ...movement.transaction, id: movement.transaction.id ?? newId(), tenantId: actor.tenantId },
    postings: movement.postings,
  });
  const { updatedAt, ...balances } = moved.wallet;
  return { wallet: { ...movement.wallet, ...balances, updatedAt }, transaction: moved.transaction };
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
