import { problems } from '../../common/problems';
import type { DatabaseTransactionConnection } from '../../db/pool';
import {
  lockTransaction, markReversed, selectTransaction, type TransactionRow,
} from '../../db/queries/money/transactions.queries';
import { moneyAudit } from './audit';
import { moneyEvent } from './events';
import { postings, recordMovement, type MoneyActor, type MoneyChange } from './movements';
import { lockWallet } from './wallet-operations';

export interface ReversalRequest {
  originalTransactionId: string;
  /** Route set B names the wallet: the original must be one of its transactions (404 otherwise). */
  walletId?: string;
  reason: string;
  idempotencyKey: string | null;
}

/**
 * Whether a transaction may be reversed now (docs/reference/money.md#rule-10),
 * as a problem to throw or null. The rules in the order they are checked:
 *   held                              → 400 hold-not-reversible (use cancel)
 *   reversed                          → 400 double-reversal
 *   a completed debit or a confirmed hold, older than maxAgeDays → 400 reversal-window-expired
 *   anything else (canceled, a credit, a transfer, a reversal …) → 400 transaction-not-reversible
 */
export function reversalRefusal(original: TransactionRow, maxAgeDays: number, now: Date = new Date()): Error | null {
  if (original.status === 'held') return problems.holdNotReversible();
  if (original.reversed || original.status === 'reversed') return problems.doubleReversal(original.id);
  const reversible = (original.type === 'debit' && original.status === 'completed')
    || (original.type === 'hold' && original.status === 'confirmed');
  if (!reversible) return problems.transactionNotReversible(original.id, original.type, original.status);
  const ageMs = now.getTime() - new Date(original.createdAt).getTime();
  if (ageMs > maxAgeDays * 86_400_000) return problems.reversalWindowExpired(maxAgeDays);
  return null;
}

/**
 * The counter-transaction of a completed debit or a confirmed hold: the amount back to available
 * (postings available +a / external −a), a `reversal` row referencing the original, the original
 * marked reversed. The wallet is locked before the original (the order every path uses), and the
 * rules are checked under both locks; the unique index on reversals is the last guard.
 */
export async function reverseTransaction(
  tx: DatabaseTransactionConnection, actor: MoneyActor, request: ReversalRequest, rules: { maxAgeDays: number },
): Promise<MoneyChange> {
  const seen = await selectTransaction(tx, actor.tenantId, request.originalTransactionId);
  if (!seen || (request.walletId !== undefined && seen.walletId !== request.walletId)) throw problems.notFound('transaction');
  const before = await lockWallet(tx, actor.tenantId, seen.walletId);
  const original = await lockTransaction(tx, actor.tenantId, seen.id);
  if (!original) throw problems.notFound('transaction');
  const refusal = reversalRefusal(original, rules.maxAgeDays);
  if (refusal) throw refusal;

  const { wallet, transaction } = await recordMovement(tx, actor, {
    wallet: before,
    delta: { available: original.amount },
    transaction: {
      type: 'reversal', status: 'completed', amount: original.amount, reason: request.reason, meta: {},
      idempotencyKey: request.idempotencyKey, referenceTransactionId: original.id,
    },
    postings: postings.credit(before.id, original.amount),
  });
  await markReversed(tx, actor.tenantId, original.id);
  return {
    transaction,
    events: [
      moneyEvent(actor, 'money.wallet.credited', wallet, transaction),
      moneyAudit(actor, 'money.transaction.reversed', { before, after: wallet, transaction }),
    ],
  };
}
