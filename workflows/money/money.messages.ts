import { defineUpdate } from '@temporalio/workflow';

/**
 * What the gateway and the money workflows exchange (workflows/money/*.workflow.ts). Bundled into
 * the workflow sandbox, so only types and message definitions live here.
 */

export interface Balances {
  available: number;
  pending: number;
  frozen: number;
}

/** A transaction as the API shows it (docs/reference/money.md, Resources), plus a hold's expiry. */
export interface TransactionView {
  /** The same id twice: `transactionId` is what the operations' answers name it (docs/reference/money.md, Resources). */
  transactionId: string;
  id: string;
  walletId: string;
  type: string;
  status: string;
  amount: number;
  currency: string;
  reason: string;
  idempotencyKey: string | null;
  referenceTransactionId: string | null;
  counterpartyWalletId: string | null;
  reversed: boolean;
  meta: Record<string, unknown>;
  balanceAfter: Balances;
  expiresAt: string | null;
  expiredAt: string | null;
  createdAt: string;
}

/** The plan's money limits at the time of the request (0 = unlimited), read by the gateway. */
export interface MoneyLimits {
  planId: string;
  maxTxAmount: number;
  maxBalance: number;
}

/** One use of an Idempotency-Key, as the activities store its answer (services/idempotency/idempotent.ts). */
export interface IdempotencyUse {
  scope: string;
  key: string;
  requestHash: string;
  ttlHours: number;
}

export interface HoldInput {
  tenantId: string;
  walletId: string;
  amount: number;
  currency: string;
  reason: string;
  ttlSeconds: number;
  limits: MoneyLimits;
  /** MONEY_MAX_HOLDS_PER_WALLET: workflows read no configuration, so it comes along. */
  maxOpenHolds: number;
  idempotency: IdempotencyUse;
}

export type HoldOutcome = 'confirmed' | 'canceled' | 'expired';

export interface SettleRequest {
  action: 'confirm' | 'cancel';
  idempotency: IdempotencyUse;
}

export interface TransferInput {
  tenantId: string;
  fromWalletId: string;
  toWalletId: string;
  amount: number;
  currency: string;
  reason: string;
  limits: MoneyLimits;
  idempotency: IdempotencyUse;
}

/**
 * A business refusal (insufficient funds, a plan limit, an unknown or another tenant's wallet ...) as
 * a money workflow completes with it: the problem its activity refused with (type = the problem
 * suffix, docs/decisions/money.md). It is an answer, not a fault, so the workflow ends completed, not failed;
 * only a real fault (the database still down after the retries, a bug) fails a workflow.
 */
export interface Refused {
  ok: false;
  problem: { type: string; detail: string; extensions: Record<string, unknown> };
}

/** How a transfer's workflow ends: the outgoing transaction, or its refusal. */
export type TransferResult = { ok: true; transaction: TransactionView } | Refused;

/** How a hold's workflow ends: the hold and what became of it, or the refusal of its placement. */
export type HoldResult = { ok: true; holdTransactionId: string; outcome: HoldOutcome } | Refused;

/** The request hash a caller sends along, so a reused key with another body is told apart (409). */
export interface SameRequest {
  requestHash: string;
}

/** Sent with the start (update-with-start): answers the placed hold, or its refusal. */
export const holdPlaced = defineUpdate<TransactionView, [SameRequest]>('money.hold.placed');
/** Confirm or cancel: answers the confirm or cancel transaction. */
export const settleHold = defineUpdate<TransactionView, [SettleRequest]>('money.hold.settle');
/** Sent with the start (update-with-start): answers the outgoing transfer transaction, or the refusal. */
export const transferDone = defineUpdate<TransactionView, [SameRequest]>('money.transfer.done');
