import { newId } from '../../common/ids';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';
import type { DatabasePool } from '../../db/pool';
import { sqlState } from '../../db/retry';
import type { TransactionView, TransferInput } from '../../workflows/money/money.messages';
import { moneyAudit } from './audit';
import { checkFunds, walletOfTenant, workflowActor, type WorkflowCaller } from './checks';
import { moneyEvent } from './events';
import { runFlowOperation } from './flow-operation';
import { postings, recordMovement } from './movements';
import { operationView } from './operation-view';
import { checkTransactionAmount, checkWalletBalance } from './plan-limits';
import { checkCurrency, lockWalletsOfVerifiedCaller } from './wallet-operations';

/** What the transfer workflow's operation works with. */
export interface TransferDeps {
  /** The application role (row-level security applies): the transfer runs in its tenant's transaction (withTenant). */
  appPool: DatabasePool;
  logger: Logger;
}

/**
 * Source available → destination available in one transaction. Both wallets are locked in
 * ascending id order (lockWalletsOfVerifiedCaller), so transfers in opposite directions queue instead of
 * deadlocking. A row on each wallet (the incoming one references the outgoing one), both
 * postings under the outgoing row, money.wallet.transfer and an audit record per side. Answers
 * the outgoing row.
 */
export async function transfer({ appPool, logger }: TransferDeps, input: TransferInput, caller: WorkflowCaller): Promise<TransactionView> {
  const actor = workflowActor(input.tenantId, caller);
  try {
    return await runFlowOperation(appPool, input.tenantId, input.idempotency, async (tx) => {
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
        view: operationView(out.transaction),
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
}
