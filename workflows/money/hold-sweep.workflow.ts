import { proxyActivities } from '@temporalio/workflow';
import type { MoneyActivities } from '../../activities/money';

const money = proxyActivities<MoneyActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

export interface HoldSweepInput {
  /** How long past its expiresAt a hold may still be held before the sweep expires it itself. */
  graceSeconds: number;
  batchSize: number;
}

/**
 * The safety net of docs/reference/money.md#rule-8: every hold expires by its own workflow's timer; this run,
 * every MONEY_HOLD_CLEANUP_INTERVAL_SEC, expires the holds still held a grace period past their
 * expiry, whose workflow is gone (terminated by hand, lost with a server's history). Returns how
 * many it expired.
 */
export async function moneyHoldSweep(input: HoldSweepInput): Promise<number> {
  return money.expireOverdueHolds(input);
}
