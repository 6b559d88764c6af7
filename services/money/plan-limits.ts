import { problems } from '../../common/problems';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import type { WalletRow } from '../../db/queries/money/wallets.queries';
import { moneyLimitsOf, type MoneyLimits } from '../billing/limits';

export type { MoneyLimits };

/**
 * The plan limits money operations obey (maxTxAmount, maxBalance), cached per tenant
 * (docs/reference/money.md#rule-12: 5 minutes). Billing that cannot answer is survived with the
 * last known value, however old; with none the operation fails closed (503 billing-unavailable),
 * because accepting money without knowing the limits could break them. Concurrent misses of one tenant share one read.
 */
export class PlanLimitReader {
  private readonly cache = new Map<string, { limits: MoneyLimits; readAt: number }>();
  private readonly inFlight = new Map<string, Promise<MoneyLimits>>();
  /**
   * Bumped by invalidate(): a read begun before a plan change may return the old plan's limits, so it
   * is kept only if no change came while it ran (as the gateway's plan cache does).
   */
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly load: (tenantId: string) => Promise<MoneyLimits>,
    private readonly options: { ttlMs: number; maxEntries?: number; logger?: Logger; now?: () => number },
  ) {}

  async limitsFor(tenantId: string): Promise<MoneyLimits> {
    const now = this.options.now?.() ?? Date.now();
    const cached = this.cache.get(tenantId);
    if (cached && now - cached.readAt < this.options.ttlMs) return cached.limits;
    let reading = this.inFlight.get(tenantId);
    if (!reading) {
      reading = this.refresh(tenantId, now).finally(() => this.inFlight.delete(tenantId));
      this.inFlight.set(tenantId, reading);
    }
    return reading;
  }

  /**
   * Forgets a tenant's limits (a plan change); the next operation reads them again, and does not join
   * a read begun before the change.
   */
  invalidate(tenantId: string): void {
    this.generations.set(tenantId, (this.generations.get(tenantId) ?? 0) + 1);
    this.cache.delete(tenantId);
    this.inFlight.delete(tenantId);
  }

  private async refresh(tenantId: string, now: number): Promise<MoneyLimits> {
    const generation = this.generations.get(tenantId) ?? 0;
    try {
      const limits = await this.load(tenantId);
      if ((this.generations.get(tenantId) ?? 0) === generation) this.remember(tenantId, limits, now);
      return limits;
    } catch (error) {
      const stale = this.cache.get(tenantId);
      this.options.logger?.warn({ err: error, tenantId, stale: stale !== undefined }, 'plan limits could not be read');
      if (stale) return stale.limits;
      throw problems.billingUnavailable();
    }
  }

  private remember(tenantId: string, limits: MoneyLimits, now: number): void {
    this.cache.delete(tenantId);
    // Map keeps insertion order: the first key is the least recently read.
    if (this.cache.size >= (this.options.maxEntries ?? 10_000)) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(tenantId, { limits, readAt: now });
  }
}

/**
 * The reader over billing's service: the money limits of the tenant's subscription plan, as billing
 * keeps the plans; no subscription reads as billing unavailable.
 */
export function createPlanLimitReader(db: DatabasePool, options: { ttlMs: number; logger?: Logger }): PlanLimitReader {
  return new PlanLimitReader(async (tenantId) => {
    const limits = await moneyLimitsOf(db, tenantId);
    if (!limits) throw new Error(`tenant ${tenantId} has no subscription`);
    return limits;
  }, options);
}

/** A limit of 0 means unlimited (the plan catalogue's convention). */
const exceeds = (value: number, max: number) => max > 0 && value > max;

/** 402 plan-limit-exceeded when one operation moves more than the plan allows (credit, debit, hold, transfer). */
export function checkTransactionAmount(limits: MoneyLimits, amount: number): void {
  if (!exceeds(amount, limits.maxTxAmount)) return;
  throw problems.planLimitExceeded(
    { resource: 'maxTxAmount', allowed: limits.maxTxAmount, current: amount, planId: limits.planId },
    { maxTxAmount: limits.maxTxAmount, value: amount, max: limits.maxTxAmount },
    `The amount ${amount} is above the plan's maximum single transaction of ${limits.maxTxAmount}`,
  );
}

/**
 * 402 plan-limit-exceeded when money coming into a wallet would take its balance (available, pending
 * and frozen together) above the plan's maximum (credit, incoming transfer).
 */
export function checkWalletBalance(limits: MoneyLimits, wallet: WalletRow, incoming: number): void {
  const balance = wallet.available + wallet.pending + wallet.frozen;
  if (!exceeds(balance + incoming, limits.maxBalance)) return;
  throw problems.planLimitExceeded(
    { resource: 'maxBalance', allowed: limits.maxBalance, current: balance, planId: limits.planId },
    { maxBalance: limits.maxBalance, value: balance + incoming, max: limits.maxBalance },
    `The wallet's balance would reach ${balance + incoming}, above the plan's maximum of ${limits.maxBalance}`,
  );
}
