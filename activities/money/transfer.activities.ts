import { requestActor } from '../../common/temporal/activity-context';
import { transfer, type TransferDeps } from '../../services/money/transfers';
import type { TransactionView, TransferInput } from '../../workflows/money/money.messages';
import { refusalsAsFailures } from '../failures';

/** The transfer workflow's activity: services/money/transfers.ts, for the caller the workflow carried. */
export function createTransferActivities(deps: TransferDeps) {
  return {
    async transfer(input: TransferInput): Promise<TransactionView> {
      return refusalsAsFailures(() => transfer(deps, input, requestActor()));
    },
  };
}
