import { enqueueEvent } from '../../common/events/publish';
import { topics } from '../../common/events/topics';
import { newId } from '../../common/ids';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';
import { runIdempotent } from '../../db/idempotent';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { countOpenHolds, selectOverdueHolds } from '../../db/queries/money/holds.queries';
import { insertPostings } from '../../db/queries/money/ledger.queries';
import {
  insertTransaction, lockTransaction, selectTransaction, updateTransactionStatus, type TransactionRow,
} from '../../db/queries/money/transactions.queries';
import { lockWallets, updateBalances } from '../../db/queries/money/wallets.queries';
import type { HoldInput, IdempotencyUse, SettleRequest, TransactionView } from '../../workflows/money/money.messages';
import { auditMoneyOperation } from './audit';
import { checkCurrency, checkFunds, checkTxAmount, walletOfTenant } from './checks';
import { refusalsAsFailures } from './failures';
import { transactionView } from './transaction-view';

export interface MoneyActivityDeps {
  /** The owner role's pool; every operation still runs in its tenant's transaction (withTenant). */
  ownerPool: DatabasePool;
  logger: Logger;
}

/** The idempotent run of one operation: its answer is stored in the operation's own transaction. */
export function idempotently(
  pool: DatabasePool,
  tenantId: string,
  use: IdempotencyUse,
  operation: (tx: DatabaseTransactionConnection) => Promise<TransactionView>,
): Promise<TransactionView> {
  return refusalsAsFailures(async () => {
    const answer = await runIdempotent(pool, { tenantId, scope: use.scope, key: use.key, hash: use.requestHash, ttlHours: use.ttlHours },
      async (tx) => ({ statusCode: 200, body: await operation(tx) }));
    return answer.body as TransactionView;
  });
}

export function createHoldActivities({ ownerPool, logger }: MoneyActivityDeps) {
  return {
    /**
     * available → frozen under the wallet's lock (document 2: available ≥ amount, fewer than
     * MONEY_MAX_HOLDS_PER_WALLET open holds), with its postings, the hold row (expiresAt = now +
     * ttl) and the audit record. Run again after a crash, it answers the committed hold.
     */
    async placeHold(input: HoldInput): Promise<TransactionView> {
      return idempotently(ownerPool, input.tenantId, input.idempotency, async (tx) => {
        const [locked] = await lockWallets(tx, [input.walletId]);
        const wallet = walletOfTenant(locked, input.tenantId);
        checkCurrency(wallet, input.currency);
        checkTxAmount(input.amount, input.limits);
        if (await countOpenHolds(tx, wallet.id) >= input.maxOpenHolds) throw problems.holdLimitExceeded(input.maxOpenHolds);
        checkFunds(wallet, input.amount);
        const after = await updateBalances(tx, wallet.id, { available: -input.amount, frozen: input.amount });
        const hold = await insertTransaction(tx, {
          id: newId(), tenantId: input.tenantId, walletId: wallet.id, type: 'hold', status: 'held', amount: input.amount,
          currency: input.currency, reason: input.reason, idempotencyKey: input.idempotency.key, meta: {},
          balanceAfter: { available: after.available, pending: after.pending, frozen: after.frozen },
          expiresAt: new Date(Date.now() + input.ttlSeconds * 1000).toISOString(),
        });
        await insertPostings(tx, {
          tenantId: input.tenantId, transactionId: hold.id, currency: input.currency,
          postings: [{ walletId: wallet.id, bucket: 'available', amount: -input.amount }, { walletId: wallet.id, bucket: 'frozen', amount: input.amount }],
        });
        await auditMoneyOperation(tx, 'money.hold.placed', hold);
        return transactionView(hold);
      });
    },

    /**
     * Confirm (frozen → out of the platform) or cancel (frozen → available) of a held hold, with the
     * confirm or cancel row referencing it. A hold past its expiresAt is expired whatever its row
     * says yet (its timer may be a moment late): 422 hold-expired.
     */
    async settleHold(request: SettleRequest & { tenantId: string; holdId: string }): Promise<TransactionView> {
      return idempotently(ownerPool, request.tenantId, request.idempotency, async (tx) => {
        const hold = await lockedHold(tx, request.tenantId, request.holdId);
        if (hold.status !== 'held') {
          throw hold.expiredAt ? problems.holdExpired(hold.id) : problems.holdSettled(hold.id, hold.status);
        }
        if (hold.expiresAt && Date.parse(hold.expiresAt) <= Date.now()) throw problems.holdExpired(hold.id);
        const confirm = request.action === 'confirm';
        const settlement = await release(tx, hold, confirm ? 'confirm' : 'cancel', {});
        await updateTransactionStatus(tx, hold.id, confirm ? 'confirmed' : 'canceled');
        await auditMoneyOperation(tx, confirm ? 'money.hold.confirmed' : 'money.hold.canceled', settlement);
        return transactionView(settlement);
      });
    },

    /** The hold's timer fired: frozen → available, money.hold.expired and its audit record. */
    async expireHold({ tenantId, holdId }: { tenantId: string; holdId: string }): Promise<boolean> {
      return withTenant(ownerPool, tenantId, (tx) => expire(tx, tenantId, holdId));
    },

    /** The safety-net sweep: expires overdue holds in batches, each in its own transaction. */
    async expireOverdueHolds({ graceSeconds, batchSize }: { graceSeconds: number; batchSize: number }): Promise<number> {
      let expired = 0;
      for (;;) {
        const overdue = await selectOverdueHolds(ownerPool, graceSeconds, batchSize);
        for (const hold of overdue) {
          if (await withTenant(ownerPool, hold.tenantId, (tx) => expire(tx, hold.tenantId, hold.id))) expired += 1;
        }
        if (overdue.length < batchSize) break;
      }
      if (expired > 0) logger.warn({ expired }, 'holds expired by the sweep, not by their own workflow');
      return expired;
    },
  };
}

/** The hold with its wallet locked first, then the hold row: the lock order of every money path. */
async function lockedHold(tx: DatabaseTransactionConnection, tenantId: string, holdId: string): Promise<TransactionRow> {
  const found = await selectTransaction(tx, holdId);
  if (!found || found.tenantId !== tenantId || found.type !== 'hold') throw problems.notFound('hold');
  await lockWallets(tx, [found.walletId]);
  return (await lockTransaction(tx, holdId))!;
}

/** Releases a hold's frozen amount: out of the platform (confirm) or back to available (cancel). */
async function release(
  tx: DatabaseTransactionConnection,
  hold: TransactionRow,
  type: 'confirm' | 'cancel',
  meta: Record<string, unknown>,
  reason = hold.reason,
): Promise<TransactionRow> {
  const toAvailable = type === 'cancel';
  const after = await updateBalances(tx, hold.walletId, { frozen: -hold.amount, available: toAvailable ? hold.amount : 0 });
  const row = await insertTransaction(tx, {
    id: newId(), tenantId: hold.tenantId, walletId: hold.walletId, type, status: 'completed', amount: hold.amount,
    currency: hold.currency, reason, idempotencyKey: null, referenceTransactionId: hold.id, meta,
    balanceAfter: { available: after.available, pending: after.pending, frozen: after.frozen },
  });
  await insertPostings(tx, {
    tenantId: hold.tenantId, transactionId: row.id, currency: hold.currency,
    postings: [
      { walletId: hold.walletId, bucket: 'frozen', amount: -hold.amount },
      toAvailable ? { walletId: hold.walletId, bucket: 'available', amount: hold.amount } : { walletId: null, bucket: 'external', amount: hold.amount },
    ],
  });
  return row;
}

/** Expires a hold still held (else does nothing and answers false): by its timer or by the sweep. */
async function expire(tx: DatabaseTransactionConnection, tenantId: string, holdId: string): Promise<boolean> {
  const hold = await lockedHold(tx, tenantId, holdId);
  if (hold.status !== 'held') return false;
  const expiredAt = new Date().toISOString();
  const cancel = await release(tx, hold, 'cancel', { expired: true }, 'hold expired');
  await updateTransactionStatus(tx, hold.id, 'canceled', expiredAt);
  await enqueueEvent(tx, {
    tenantId, type: 'money.hold.expired', source: 'money', topic: topics.money.name, key: hold.walletId,
    data: {
      wallet_id: hold.walletId, hold_transaction_id: hold.id, cancel_transaction_id: cancel.id, amount: hold.amount,
      currency: hold.currency, expires_at: hold.expiresAt, expired_at: expiredAt, balance_after: cancel.balanceAfter,
    },
  });
  // Nobody asked for an expiry: the record names no actor (the placing request's is the hold's own).
  await auditMoneyOperation(tx, 'money.hold.expired', cancel, { expiredAt }, { actorId: null });
  return true;
}
