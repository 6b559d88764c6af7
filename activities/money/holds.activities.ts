import type { Logger } from '../../common/logger';
import { enqueueEvents, type EventInput } from '../../services/events/publish';
import { moneyAudit } from '../../services/money/audit';
import { moneyEvent } from '../../services/money/events';
import { postings, recordMovement, type MoneyActor, type RecordedMovement } from '../../services/money/movements';
import { checkCurrency, lockWalletsOfVerifiedCaller } from '../../services/money/wallet-operations';
import { checkTransactionAmount } from '../../services/money/plan-limits';
import { problems } from '../../common/problems';
import { runIdempotent } from '../../services/money/idempotent';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { countOpenHolds, selectOverdueHolds } from '../../db/queries/money/holds.queries';
import {
  lockTransaction, selectTransaction, updateTransactionStatus, type TransactionRow,
} from '../../db/queries/money/transactions.queries';
import { lockWallets, type WalletRow } from '../../db/queries/money/wallets.queries';
import type { HoldInput, IdempotencyUse, SettleRequest, TransactionView } from '../../workflows/money/money.messages';
import { actorOf, checkFunds, requireVerifiedActor, walletOfTenant } from '../../services/money/checks';
import { refusalsAsFailures } from './failures';
import { transactionView } from '../../services/money/operation-view';

export interface MoneyActivityDeps {
  /** The owner role's pool; every operation still runs in its tenant's transaction (withTenant). */
  ownerPool: DatabasePool;
  logger: Logger;
}

/**
 * One operation run at most once per Idempotency-Key (db/idempotent.ts): its answer is stored in
 * its own transaction, so the local activity run again after a worker crash answers what was
 * committed instead of moving the money twice. The operation's outbox events (money event, audit
 * records) are written with the stored answer, in one statement.
 */
export function idempotently(
  pool: DatabasePool,
  tenantId: string,
  use: IdempotencyUse,
  operation: (tx: DatabaseTransactionConnection) => Promise<{ view: TransactionView; events: EventInput[] }>,
): Promise<TransactionView> {
  return refusalsAsFailures(async () => {
    const request = { tenantId, scope: use.scope, key: use.key, hash: use.requestHash, ttlHours: use.ttlHours };
    const answer = await runIdempotent(pool, request, async (tx) => {
      const { view, events } = await operation(tx);
      return { statusCode: 200, body: view, events };
    });
    return answer.body as TransactionView;
  });
}

export function createHoldActivities({ ownerPool, logger }: MoneyActivityDeps) {
  return {
    /**
     * available → frozen under the wallet's lock (document 2: available ≥ amount, fewer than
     * MONEY_MAX_HOLDS_PER_WALLET open holds, the plan's maxTxAmount), with the hold row (expiresAt
     * = now + ttl), its postings and the audit record.
     */
    async placeHold(input: HoldInput): Promise<TransactionView> {
      const actor = actorOf(input.tenantId);
      return idempotently(ownerPool, input.tenantId, input.idempotency, async (tx) => {
        const [locked] = await lockWalletsOfVerifiedCaller(tx, actor, [input.walletId]);
        const before = walletOfTenant(locked, input.tenantId);
        checkCurrency(before, input.currency);
        checkTransactionAmount(input.limits, input.amount);
        if (await countOpenHolds(tx, before.id) >= input.maxOpenHolds) throw problems.holdLimitExceeded(input.maxOpenHolds);
        checkFunds(before, input.amount);
        const { wallet, transaction } = await recordMovement(tx, actor, {
          wallet: before,
          delta: { available: -input.amount, frozen: input.amount },
          transaction: {
            type: 'hold', status: 'held', amount: input.amount, reason: input.reason, meta: {},
            idempotencyKey: input.idempotency.key, expiresAt: new Date(Date.now() + input.ttlSeconds * 1000).toISOString(),
          },
          postings: postings.hold(before.id, input.amount),
        });
        return { view: transactionView(transaction), events: [moneyAudit(actor, 'money.transaction.held', { before, after: wallet, transaction })] };
      });
    },

    /**
     * Confirm (the frozen funds leave the platform) or cancel (frozen → available) of a held hold,
     * writing the confirm or cancel row that references it. A hold past its expiresAt is expired,
     * whatever its row says yet (its timer may run a moment late): 422 hold-expired.
     */
    async settleHold(request: SettleRequest & { tenantId: string; holdId: string }): Promise<TransactionView> {
      const actor = actorOf(request.tenantId);
      return idempotently(ownerPool, request.tenantId, request.idempotency, async (tx) => {
        await requireVerifiedActor(tx, actor);
        const { hold, wallet } = await lockedHold(tx, request.tenantId, request.holdId);
        if (hold.status !== 'held') throw hold.expiredAt ? problems.holdExpired(hold.id) : problems.holdSettled(hold.id, hold.status);
        if (hold.expiresAt && Date.parse(hold.expiresAt) <= Date.now()) throw problems.holdExpired(hold.id);
        const settlement = await release(tx, actor, hold, wallet, request.action, {});
        await updateTransactionStatus(tx, hold.id, request.action === 'confirm' ? 'confirmed' : 'canceled');
        return { view: transactionView(settlement.transaction), events: [settlement.audit] };
      });
    },

    /** The hold's own timer fired: frozen → available, money.hold.expired, audit. False if no longer held. */
    async expireHold({ tenantId, holdId }: { tenantId: string; holdId: string }): Promise<boolean> {
      return withTenant(ownerPool, tenantId, (tx) => expire(tx, actorOf(tenantId, true), holdId));
    },

    /** The safety-net sweep: expires overdue holds in batches, each in its own tenant's transaction. */
    async expireOverdueHolds({ graceSeconds, batchSize }: { graceSeconds: number; batchSize: number }): Promise<number> {
      let expired = 0;
      for (;;) {
        const overdue = await selectOverdueHolds(ownerPool, graceSeconds, batchSize);
        for (const hold of overdue) {
          if (await withTenant(ownerPool, hold.tenantId, (tx) => expire(tx, actorOf(hold.tenantId, true), hold.id))) expired += 1;
        }
        if (overdue.length < batchSize) break;
      }
      if (expired > 0) logger.warn({ expired }, 'holds expired by the sweep, not by their own workflow');
      return expired;
    },
  };
}

/** The hold, its wallet locked first and then the hold row: the lock order of every money path. */
async function lockedHold(tx: DatabaseTransactionConnection, tenantId: string, holdId: string): Promise<{ hold: TransactionRow; wallet: WalletRow }> {
  const found = await selectTransaction(tx, holdId);
  if (!found || found.tenantId !== tenantId || found.type !== 'hold') throw problems.notFound('hold');
  const [wallet] = await lockWallets(tx, [found.walletId]);
  return { hold: (await lockTransaction(tx, holdId))!, wallet };
}

/**
 * Writes the confirm or cancel row of a hold: its frozen amount leaves (confirm) or returns to
 * available (cancel). Its audit record is returned for the caller to write with its other events.
 */
async function release(
  tx: DatabaseTransactionConnection,
  actor: MoneyActor,
  hold: TransactionRow,
  before: WalletRow,
  action: 'confirm' | 'cancel',
  meta: Record<string, unknown>,
): Promise<RecordedMovement & { audit: EventInput }> {
  const cancel = action === 'cancel';
  const { wallet, transaction } = await recordMovement(tx, actor, {
    wallet: before,
    delta: { frozen: -hold.amount, available: cancel ? hold.amount : 0 },
    transaction: {
      type: action, status: 'completed', amount: hold.amount, reason: hold.reason, meta,
      idempotencyKey: null, referenceTransactionId: hold.id,
    },
    postings: cancel ? postings.cancel(hold.walletId, hold.amount) : postings.confirm(hold.walletId, hold.amount),
  });
  const verb = meta.expired ? 'expired' : cancel ? 'canceled' : 'confirmed';
  const audit = moneyAudit(actor, `money.transaction.${verb}`, { before, after: wallet, transaction, meta: { holdTransactionId: hold.id } });
  return { wallet, transaction, audit };
}

/** Expires a hold still held (else does nothing and answers false): by its own timer or by the sweep. */
async function expire(tx: DatabaseTransactionConnection, actor: MoneyActor, holdId: string): Promise<boolean> {
  const { hold, wallet: before } = await lockedHold(tx, actor.tenantId, holdId);
  if (hold.status !== 'held') return false;
  const expiredAt = new Date().toISOString();
  const { wallet, transaction, audit } = await release(tx, actor, hold, before, 'cancel', { expired: true });
  await updateTransactionStatus(tx, hold.id, 'canceled', expiredAt);
  await enqueueEvents(tx, [audit, moneyEvent(actor, 'money.hold.expired', wallet, transaction, {
    hold_transaction_id: hold.id, expires_at: hold.expiresAt, expired_at: expiredAt,
  })]);
  return true;
}
