import { moneyAudit } from '../../services/money/audit';
import { moneyEvent } from '../../services/money/events';
import { postings, recordMovement } from '../../services/money/movements';
import { checkCurrency, lockWalletsOfVerifiedCaller } from '../../services/money/wallet-operations';
import { checkTransactionAmount, checkWalletBalance } from '../../services/money/plan-limits';
import { newId } from '../../common/ids';
import { problems } from '../../common/problems';
import { sqlState } from '../../db/retry';
import type { TransactionView, TransferInput } from '../../workflows/money/money.messages';
import { actorOf, checkFunds, walletOfTenant } from '../../services/money/checks';
import { idempotently, type MoneyActivityDeps } from './holds.activities';
import { transactionView } from '../../services/money/operation-view';

export function createTransferActivities({ ownerPool, logger }: MoneyActivityDeps) {
  return {
    /**
     * Source available → destination available in one transaction. Both wallets are locked in
     * ascending id order (lockWalletsOfVerifiedCaller), so transfers in opposite directions queue instead of
     * deadlocking. A row on each wallet (the incoming one references the outgoing one), both
     * postings under the outgoing row, money.wallet.transfer and an audit record per side. Answers
     * the outgoing row.
     */
    async transfer(input: TransferInput): Promise<TransactionView> {
      const actor = actorOf(input.tenantId);
      try {
        return await idempotently(ownerPool, input.tenantId, input.idempotency, async (tx) => {
          if (input.fromWalletId === input.toWalletId) {
            throw problems.validation([{ field: 'toWalletId', code: 'INVALID_VALUE', message: 'must differ from fromWalletId' }]);
          }
          const locked = await lockWalletsOfVerifiedCaller(tx, actor, [input.fromWalletId, input.toWalletId]);
          const source = walletOfTenant(locked.find((w) => w.id === input.fromWalletId), input.tenantId);
          const destination = walletOfTenant(locked.find((w) => w.id === input.toWalletId), input.tenantId);
          checkCurrency(source, input.currency);
          checkCurrency(destination, input.currency);
          checkTransactionAmount(input.limits, input.amount);
          checkFunds(source, input.amount);
          checkWalletBalance(input.limits, destination, input.amount);

          const common = { type: 'transfer', status: 'completed', amount: input.amount, reason: input.reason } as const;
          const outgoingId = newId();
          const out = await recordMovement(tx, actor, {
            wallet: source,
            delta: { available: -input.amount },
            transaction: {
              ...common, id: outgoingId, idempotencyKey: input.idempotency.key, counterpartyWalletId: destination.id, meta: { direction: 'out' },
            },
            postings: postings.transfer(source.id, destination.id, input.amount),
          });
          const into = await recordMovement(tx, actor, {
            wallet: destination,
            delta: { available: input.amount },
            transaction: {
              ...common, idempotencyKey: null, referenceTransactionId: outgoingId, counterpartyWalletId: source.id, meta: { direction: 'in' },
            },
            postings: [],
          });
          return {
            view: transactionView(out.transaction),
            events: [
              moneyEvent(actor, 'money.wallet.transfer', out.wallet, out.transaction, {
                from_wallet_id: source.id, to_wallet_id: destination.id, incoming_transaction_id: into.transaction.id,
              }),
              moneyAudit(actor, 'money.transaction.transferred', { before: source, after: out.wallet, transaction: out.transaction }),
              moneyAudit(actor, 'money.transaction.transferred', { before: destination, after: into.wallet, transaction: into.transaction }),
            ],
          };
        });
      } catch (error) {
        const code = sqlState(error);
        // Counted where it happens; the workflow's retry policy runs the transaction again.
        if (code === '40P01' || code === '40001') logger.warn({ code }, 'transfer lost a lock conflict; retried by its retry policy');
        throw error;
      }
    },
  };
}
