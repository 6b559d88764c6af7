import { enqueueEvent } from '../../common/events/publish';
import { topics } from '../../common/events/topics';
import { newId } from '../../common/ids';
import { problems } from '../../common/problems';
import { sqlState } from '../../db/retry';
import { insertPostings } from '../../db/queries/money/ledger.queries';
import { insertTransaction } from '../../db/queries/money/transactions.queries';
import { lockWallets, updateBalances, type WalletRow } from '../../db/queries/money/wallets.queries';
import type { TransactionView, TransferInput } from '../../workflows/money/money.messages';
import { auditMoneyOperation } from './audit';
import { checkBalanceLimit, checkCurrency, checkFunds, checkTxAmount, walletOfTenant } from './checks';
import { idempotently, type MoneyActivityDeps } from './holds.activities';
import { transactionView } from './transaction-view';

const balancesOf = (wallet: WalletRow) => ({ available: wallet.available, pending: wallet.pending, frozen: wallet.frozen });

export function createTransferActivities({ ownerPool, logger }: MoneyActivityDeps) {
  return {
    /**
     * Source available → destination available in one transaction: both wallets locked in
     * ascending id order (lockWallets), so two transfers in opposite directions queue instead of
     * deadlocking; a row on each wallet (the incoming one references the outgoing one), the postings
     * under the outgoing one, money.wallet.transfer and the audit record. Answers the outgoing row.
     */
    async transfer(input: TransferInput): Promise<TransactionView> {
      try {
        return await idempotently(ownerPool, input.tenantId, input.idempotency, async (tx) => {
          const locked = await lockWallets(tx, [input.fromWalletId, input.toWalletId]);
          const source = walletOfTenant(locked.find((w) => w.id === input.fromWalletId), input.tenantId);
          const destination = walletOfTenant(locked.find((w) => w.id === input.toWalletId), input.tenantId);
          checkCurrency(source, input.currency);
          checkCurrency(destination, input.currency);
          checkTxAmount(input.amount, input.limits);
          checkFunds(source, input.amount);
          checkBalanceLimit(destination, input.amount, input.limits);
          if (source.id === destination.id) throw problems.validation([{ field: 'toWalletId', code: 'INVALID_VALUE', message: 'a transfer needs two wallets' }]);

          const sourceAfter = await updateBalances(tx, source.id, { available: -input.amount });
          const destinationAfter = await updateBalances(tx, destination.id, { available: input.amount });
          const common = {
            tenantId: input.tenantId, type: 'transfer', status: 'completed', amount: input.amount, currency: input.currency,
            reason: input.reason, meta: {},
          } as const;
          const outgoing = await insertTransaction(tx, {
            ...common, id: newId(), walletId: source.id, idempotencyKey: input.idempotency.key,
            counterpartyWalletId: destination.id, balanceAfter: balancesOf(sourceAfter), meta: { direction: 'out' },
          });
          const incoming = await insertTransaction(tx, {
            ...common, id: newId(), walletId: destination.id, idempotencyKey: null, referenceTransactionId: outgoing.id,
            counterpartyWalletId: source.id, balanceAfter: balancesOf(destinationAfter), meta: { direction: 'in' },
          });
          await insertPostings(tx, {
            tenantId: input.tenantId, transactionId: outgoing.id, currency: input.currency,
            postings: [{ walletId: source.id, bucket: 'available', amount: -input.amount }, { walletId: destination.id, bucket: 'available', amount: input.amount }],
          });
          await enqueueEvent(tx, {
            tenantId: input.tenantId, type: 'money.wallet.transfer', source: 'money', topic: topics.money.name, key: source.id,
            data: {
              transaction_id: outgoing.id, incoming_transaction_id: incoming.id, from_wallet_id: source.id, to_wallet_id: destination.id,
              amount: input.amount, currency: input.currency, reason: input.reason,
            },
          });
          await auditMoneyOperation(tx, 'money.wallet.transfer', outgoing, { incomingTransactionId: incoming.id, toWalletId: destination.id });
          return transactionView(outgoing);
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
