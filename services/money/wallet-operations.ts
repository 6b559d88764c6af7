import { problems } from '../../common/problems';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { lockWallets, lockWalletsForCaller, type WalletRow } from '../../db/queries/money/wallets.queries';
import { accountIdOf } from '../../common/context';
import { isVerifiedPerson } from './checks';
import { moneyAudit } from './audit';
import { moneyEvent } from './events';
import { postings, recordMovement, type MoneyActor, type MoneyChange } from './movements';
import { checkTransactionAmount, checkWalletBalance, type MoneyLimits } from './plan-limits';

/**
 * The single-step money operations (credit, debit), each one database transaction given by the
 * caller: lock, check, balance change, transaction row with balanceAfter, balanced postings, outbox
 * event, audit record. The gateway runs them inside runIdempotent; workflow activities can run the
 * same building blocks. Business refusals are problems thrown before anything is written. Round
 * trips are what a request waits for, so an operation makes two: the lock (with the caller's
 * verified e-mail) and the writes (recordMovement); its outbox events are returned, for runIdempotent
 * to write with the stored answer.
 */

/** What credit and debit are asked (docs/reference/money.md, Resources: amount, currency, reason, meta; the key from the header). */
export interface WalletMoneyRequest {
  walletId: string;
  /** Positive integer, minor units (validated at the edge; checked again here). */
  amount: number;
  /** When given, it must be the wallet's (absent: the wallet's own). */
  currency?: string;
  reason: string;
  meta: Record<string, unknown>;
  idempotencyKey: string | null;
}

/** A wallet of the tenant locked for the rest of the transaction; 404 for an unknown or another tenant's id. */
export async function lockWallet(tx: DatabaseTransactionConnection, tenantId: string, walletId: string): Promise<WalletRow> {
  const [wallet] = await lockWallets(tx, tenantId, [walletId]);
  if (!wallet) throw problems.notFound('wallet');
  return wallet;
}

/**
 * Wallets locked (lockWallets: ascending id order) for a caller who must have a verified e-mail
 * (docs/reference/money.md#rule-13), read in the same round trip; the platform itself (actorId
 * null) is exempt. 403 email-not-verified comes before any 404, whether or not the wallets exist.
 * The rows come back in id order; an unknown id (another tenant's: the query names the actor's tenant) is missing.
 */
export async function lockWalletsOfVerifiedCaller(
  tx: DatabaseTransactionConnection, actor: MoneyActor, ids: readonly string[],
): Promise<WalletRow[]> {
  const { wallets, callerVerified } = await lockWalletsForCaller(tx, actor.tenantId, ids, actor.actorId && accountIdOf(actor.actorId));
  if (actor.actorId !== null && !(callerVerified ?? await isVerifiedPerson(tx, actor.actorId))) throw problems.emailNotVerified();
  return wallets;
}

async function lockWalletOfVerifiedCaller(tx: DatabaseTransactionConnection, actor: MoneyActor, walletId: string): Promise<WalletRow> {
  const [wallet] = await lockWalletsOfVerifiedCaller(tx, actor, [walletId]);
  if (!wallet) throw problems.notFound('wallet');
  return wallet;
}

/** Amounts are positive safe integers in minor units (docs/reference/money.md#rule-1: 1 cent minimum). */
export function checkAmount(amount: number): void {
  if (!Number.isSafeInteger(amount) || amount < 1) throw problems.invalidAmount();
}

/** The operation's currency, when given, must be the wallet's (a wallet holds one currency). */
export function checkCurrency(wallet: WalletRow, currency: string | undefined): void {
  if (currency !== undefined && currency !== wallet.currency) {
    throw problems.validation(
      [{ field: 'currency', code: 'CURRENCY_MISMATCH', message: `the wallet holds ${wallet.currency}` }],
      `Wallet ${wallet.id} holds ${wallet.currency}, not ${currency}`,
    );
  }
}

/** Credit: available +amount (docs/reference/money.md, Resources: credit adds to available), within the plan's limits; a verified caller only. */
export async function creditWallet(
  tx: DatabaseTransactionConnection, actor: MoneyActor, request: WalletMoneyRequest, limits: MoneyLimits,
): Promise<MoneyChange> {
  const before = await lockWalletOfVerifiedCaller(tx, actor, request.walletId);
  checkAmount(request.amount);
  checkTransactionAmount(limits, request.amount);
  checkCurrency(before, request.currency);
  checkWalletBalance(limits, before, request.amount);
  const { wallet, transaction } = await recordMovement(tx, actor, {
    wallet: before,
    delta: { available: request.amount },
    transaction: {
      type: 'credit', status: 'completed', amount: request.amount, reason: request.reason, meta: request.meta,
      idempotencyKey: request.idempotencyKey,
    },
    postings: postings.credit(before.id, request.amount),
  });
  return {
    transaction,
    events: [
      moneyEvent(actor, 'money.wallet.credited', wallet, transaction),
      moneyAudit(actor, 'money.transaction.credited', { before, after: wallet, transaction }),
    ],
  };
}

/**
 * Debit: available −amount. The wallet's row lock serializes concurrent debits
 * (docs/reference/money.md#rule-3), and the balance is checked under it, so it never goes below
 * zero (400 insufficient-funds). A verified caller only.
 */
export async function debitWallet(
  tx: DatabaseTransactionConnection, actor: MoneyActor, request: WalletMoneyRequest, limits: MoneyLimits,
): Promise<MoneyChange> {
  const before = await lockWalletOfVerifiedCaller(tx, actor, request.walletId);
  checkAmount(request.amount);
  checkTransactionAmount(limits, request.amount);
  checkCurrency(before, request.currency);
  if (before.available < request.amount) throw problems.insufficientFunds(before.available, request.amount);
  const { wallet, transaction } = await recordMovement(tx, actor, {
    wallet: before,
    delta: { available: -request.amount },
    transaction: {
      type: 'debit', status: 'completed', amount: request.amount, reason: request.reason, meta: request.meta,
      idempotencyKey: request.idempotencyKey,
    },
    postings: postings.debit(before.id, request.amount),
  });
  return {
    transaction,
    events: [
      moneyEvent(actor, 'money.wallet.debited', wallet, transaction),
      moneyAudit(actor, 'money.transaction.debited', { before, after: wallet, transaction }),
    ],
  };
}
