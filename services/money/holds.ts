import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';
import { enqueueEvents, type EventInput } from '../events/publish';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { countOpenHolds, selectOverdueHolds } from '../../db/queries/money/holds.queries';
import {
  lockTransaction, selectTransaction, updateTransactionStatus, type TransactionRow,
} from '../../db/queries/money/transactions.queries';
import { lockWallets, type WalletRow } from '../../db/queries/money/wallets.queries';
import type { HoldInput, SettleRequest, TransactionView } from '../../workflows/money/money.messages';
import { moneyAudit } from './audit';
import { checkFunds, requireVerifiedActor, walletOfTenant, workflowActor, type WorkflowCaller } from './checks';
import { moneyEvent } from './events';
import { runFlowOperation } from './flow-operation';
import { postings, recordMovement, type MoneyActor, type RecordedMovement } from './movements';
import { operationView } from './operation-view';
import { checkTransactionAmount } from './plan-limits';
import { checkCurrency, lockWalletsOfVerifiedCaller } from './wallet-operations';

/**
 * Holds as the hold workflow and the sweep run them (workflows/money): placed, settled (confirm or
 * cancel) or expired, each one database transaction in its tenant's. Business refusals are problems.
 */
export interface HoldDeps {
  /** The application role (row-level security applies): every operation runs in its tenant's transaction (withTenant). */
  appPool: DatabasePool;
  /** The owner role, for the hold sweep's one query that looks across every tenant (selectOverdueHolds). */
  fleetPool: DatabasePool;
  logger: Logger;
}

/**
 * available → frozen under the wallet's lock (docs/reference/money.md#rule-3, #rule-7 and #rule-11: available ≥ amount, fewer than
 * MONEY_MAX_HOLDS_PER_WALLET open holds, the plan's maxTxAmount), with the hold row (expiresAt
 * = now + ttl), its postings and the audit record.
 */
export function placeHold({ appPool }: HoldDeps, input: HoldInput, caller: WorkflowCaller): Promise<TransactionView> {
  const actor = workflowActor(input.tenantId, caller);
  return runFlowOperation(appPool, input.tenantId, input.idempotency, async (tx) => {
    const [locked] = await lockWalletsOfVerifiedCaller(tx, actor, [input.walletId]);
    const before = walletOfTenant(locked, input.tenantId);
    checkCurrency(before, input.currency);
    checkTransactionAmount(input.limits, input.amount);
    if (await countOpenHolds(tx, input.tenantId, before.id) >= input.maxOpenHolds) throw problems.holdLimitExceeded(input.maxOpenHolds);
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
    return { view: operationView(transaction), events: [moneyAudit(actor, 'money.transaction.held', { before, after: wallet, transaction })] };
  });
}

/**
 * Confirm (the frozen funds leave the platform) or cancel (frozen → available) of a held hold,
 * writing the confirm or cancel row that references it. A hold past its expiresAt is expired,
 * whatever its row says yet (its timer may run a moment late): 422 hold-expired.
 */
export function settleHold(
  { appPool }: HoldDeps, request: SettleRequest & { tenantId: string; holdId: string }, caller: WorkflowCaller,
): Promise<TransactionView> {
  const actor = workflowActor(request.tenantId, caller);
  return runFlowOperation(appPool, request.tenantId, request.idempotency, async (tx) => {
    await requireVerifiedActor(tx, actor);
    const { hold, wallet } = await lockedHold(tx, request.tenantId, request.holdId);
    if (hold.status !== 'held') throw hold.expiredAt ? problems.holdExpired(hold.id) : problems.holdSettled(hold.id, hold.status);
    if (hold.expiresAt && Date.parse(hold.expiresAt) <= Date.now()) throw problems.holdExpired(hold.id);
    const settlement = await release(tx, actor, hold, wallet, request.action, {});
    await updateTransactionStatus(tx, request.tenantId, hold.id, request.action === 'confirm' ? 'confirmed' : 'canceled');
    return { view: operationView(settlement.transaction), events: [settlement.audit] };
  });
}

/** The hold's own timer fired: frozen → available, money.hold.expired, audit. False if no longer held. */
export function expireHold(
  { appPool }: HoldDeps, { tenantId, holdId }: { tenantId: string; holdId: string }, caller: WorkflowCaller,
): Promise<boolean> {
  return withTenant(appPool, tenantId, (tx) => expire(tx, workflowActor(tenantId, caller, true), holdId));
}

/**
 * The safety-net sweep: finds overdue holds of every tenant on the fleet pool, then expires each
 * in its own tenant's transaction on the application role. Answers how many it expired.
 */
export async function expireOverdueHolds(
  { appPool, fleetPool, logger }: HoldDeps, { graceSeconds, batchSize }: { graceSeconds: number; batchSize: number }, caller: WorkflowCaller,
): Promise<number> {
  let expired = 0;
  for (;;) {
    const overdue = await selectOverdueHolds(fleetPool, graceSeconds, batchSize);
    for (const hold of overdue) {
      if (await withTenant(appPool, hold.tenantId, (tx) => expire(tx, workflowActor(hold.tenantId, caller, true), hold.id))) expired += 1;
    }
    if (overdue.length < batchSize) break;
  }
  if (expired > 0) logger.warn({ expired }, 'holds expired by the sweep, not by their own workflow');
  return expired;
}

/** The hold, its wallet locked first and then the hold row: the lock order of every money path. */
async function lockedHold(tx: DatabaseTransactionConnection, tenantId: string, holdId: string): Promise<{ hold: TransactionRow; wallet: WalletRow }> {
  const found = await selectTransaction(tx, tenantId, holdId);
  if (!found || found.type !== 'hold') throw problems.notFound('hold');
  const [wallet] = await lockWallets(tx, tenantId, [found.walletId]);
  return { hold: (await lockTransaction(tx, tenantId, holdId))!, wallet };
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
  await updateTransactionStatus(tx, actor.tenantId, hold.id, 'canceled', expiredAt);
  await enqueueEvents(tx, [audit, moneyEvent(actor, 'money.hold.expired', wallet, transaction, {
    hold_transaction_id: hold.id, expires_at: hold.expiresAt, expired_at: expiredAt,
  })]);
  return true;
}
