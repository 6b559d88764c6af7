import { requestActor } from '../../common/temporal/activity-context';
import { expireHold, expireOverdueHolds, placeHold, settleHold, type HoldDeps } from '../../services/money/holds';
import type { HoldInput, SettleRequest, TransactionView } from '../../workflows/money/money.messages';
import { refusalsAsFailures } from '../failures';

/**
 * The hold workflow's and the sweep's activities: services/money/holds.ts, for the caller the
 * workflow carried (its propagated context). Placing and settling refuse with non-retryable
 * failures; an expiry has nobody to refuse, so whatever fails it is retried until it succeeds.
 */
export function createHoldActivities(deps: HoldDeps) {
  return {
    async placeHold(input: HoldInput): Promise<TransactionView> {
      return refusalsAsFailures(() => placeHold(deps, input, requestActor()));
    },

    async settleHold(request: SettleRequest & { tenantId: string; holdId: string }): Promise<TransactionView> {
      return refusalsAsFailures(() => settleHold(deps, request, requestActor()));
    },

    async expireHold(hold: { tenantId: string; holdId: string }): Promise<boolean> {
      return expireHold(deps, hold, requestActor());
    },

    async expireOverdueHolds(sweep: { graceSeconds: number; batchSize: number }): Promise<number> {
      return expireOverdueHolds(deps, sweep, requestActor());
    },
  };
}
