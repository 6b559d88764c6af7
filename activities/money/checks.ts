import { problems } from '../../common/problems';
import type { WalletRow } from '../../db/queries/money/wallets.queries';
import type { MoneyLimits } from '../../workflows/money/money.messages';

/**
 * The refusals money operations share, checked on locked rows inside the operation's transaction.
 * Activities connect as the owner role (row-level security does not filter it), so the tenant is
 * checked here explicitly: another tenant's wallet is as absent as an unknown one (404).
 */
export function walletOfTenant(wallet: WalletRow | undefined, tenantId: string): WalletRow {
  if (!wallet || wallet.tenantId !== tenantId) throw problems.notFound('wallet');
  return wallet;
}

export function checkCurrency(wallet: WalletRow, currency: string): void {
  if (wallet.currency !== currency) {
    throw problems.validation([{ field: 'currency', code: 'INVALID_VALUE', message: `wallet ${wallet.id} holds ${wallet.currency}, not ${currency}` }]);
  }
}

/** Document 2, Limits / Money: a single transaction at most maxTxAmount (0 = unlimited). */
export function checkTxAmount(amount: number, limits: MoneyLimits): void {
  if (limits.maxTxAmount > 0 && amount > limits.maxTxAmount) throw planLimit('maxTxAmount', amount, limits.maxTxAmount, limits.planId);
}

/** A wallet's balance (all three buckets) after receiving amount stays within maxBalance (0 = unlimited). */
export function checkBalanceLimit(wallet: WalletRow, amount: number, limits: MoneyLimits): void {
  const after = wallet.available + wallet.pending + wallet.frozen + amount;
  if (limits.maxBalance > 0 && after > limits.maxBalance) throw planLimit('maxBalance', after, limits.maxBalance, limits.planId);
}

export function checkFunds(wallet: WalletRow, amount: number): void {
  if (wallet.available < amount) throw problems.insufficientFunds(wallet.available, amount);
}

/** The 402 body carries document 1's limit object and document 2's limit name, value and max. */
function planLimit(name: 'maxTxAmount' | 'maxBalance', value: number, max: number, planId: string) {
  return problems.planLimitExceeded(
    `${name} of the plan is ${max}; this operation would make it ${value}`,
    { resource: name, allowed: max, current: value, planId },
    { [name]: max, value, max },
  );
}
