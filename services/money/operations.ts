import { creditWallet, debitWallet } from './wallet-operations';
import { reverseTransaction } from './reversal';
import { operationResult, transactionView, type OperationResult, type TransactionView } from './views';
import type { Answer } from '../idempotency/idempotent';
import type { AuthState } from '../../common/context';
import type { MoneyDeps } from './deps';
import { runMoneyMutation } from './mutation';

export interface MoneyBody {
  amount: number;
  /** Optional: the wallet's own currency when absent; any other is 400. */
  currency?: string;
  reason: string;
  meta: Record<string, unknown>;
}

/**
 * POST /wallets/:id/credit and /debit. The plan limits are read before the database transaction
 * (from the 5-minute cache): reading them inside would hold a pooled connection while waiting for
 * another, which under load can exhaust the pool.
 */
export async function moveMoney(
  deps: MoneyDeps, auth: AuthState, kind: 'credit' | 'debit', walletId: string, body: MoneyBody, key: string,
): Promise<Answer<OperationResult>> {
  const limits = await deps.limits.limitsFor(auth.tenantId);
  const operation = kind === 'credit' ? creditWallet : debitWallet;
  return runMoneyMutation(deps, auth, {
    // The operation reads the caller's verified e-mail with its wallet lock (one round trip fewer).
    scope: `POST /wallets/:id/${kind}`, key, request: { walletId, body }, requireVerifiedEmail: false,
  }, async (tx, actor) => {
    const change = await operation(tx, actor, {
      walletId, amount: body.amount, currency: body.currency, reason: body.reason, meta: body.meta, idempotencyKey: key,
    }, limits);
    return { statusCode: 200, body: operationResult(change.transaction), events: change.events };
  });
}

export interface ReversalCall {
  /** The route the key is scoped to. */
  scope: string;
  originalTransactionId: string;
  walletId?: string;
  reason: string;
  /** Path parameters and body as sent, for the request hash. */
  request: unknown;
}

/** Both reversal routes: the counter-transaction, as a transaction (docs/reference/money.md#rule-10). */
export function reverse(deps: MoneyDeps, auth: AuthState, call: ReversalCall, key: string): Promise<Answer<TransactionView>> {
  return runMoneyMutation(deps, auth, { scope: call.scope, key, request: call.request, requireVerifiedEmail: true }, async (tx, actor) => {
    const change = await reverseTransaction(tx, actor, {
      originalTransactionId: call.originalTransactionId, walletId: call.walletId, reason: call.reason, idempotencyKey: key,
    }, { maxAgeDays: deps.config.money.reversalMaxAgeDays });
    return { statusCode: 200, body: transactionView(change.transaction), events: change.events };
  });
}
