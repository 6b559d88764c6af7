import type { EventInput } from '../events/publish';
import { topics } from '../events/topics';
import type { TransactionRow } from '../../db/queries/money/transactions.queries';
import type { WalletRow } from '../../db/queries/money/wallets.queries';
import type { MoneyActor } from './movements';

export type MoneyEventType = 'money.wallet.credited' | 'money.wallet.debited' | 'money.wallet.transfer' | 'money.hold.expired';

/**
 * A money event for the outbox, written in the transaction of the change with the operation's audit
 * record (see MoneyChange) (docs/reference/money.md, Events: topic platform.money.events, key
 * wallet_id; de-duplicated permanently downstream by event id). The payloads follow the
 * snake_case of the auth events and carry the transaction as the API shows it, plus the wallet's owner.
 */
export function moneyEvent(
  actor: MoneyActor,
  type: MoneyEventType,
  wallet: WalletRow,
  transaction: TransactionRow,
  extra: Record<string, unknown> = {},
): EventInput {
  return {
    tenantId: actor.tenantId,
    type,
    source: 'money',
    topic: topics.money.name,
    key: wallet.id,
    data: {
      wallet_id: wallet.id,
      tenant_id: actor.tenantId,
      user_id: wallet.userId,
      transaction_id: transaction.id,
      transaction_type: transaction.type,
      amount: transaction.amount,
      currency: transaction.currency,
      reason: transaction.reason,
      reference_transaction_id: transaction.referenceTransactionId,
      balance_after: transaction.balanceAfter,
      actor_id: actor.actorId,
      occurred_at: transaction.createdAt,
      ...extra,
    },
    traceId: actor.traceId,
  };
}
