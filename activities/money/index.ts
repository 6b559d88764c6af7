import type { HoldDeps } from '../../services/money/holds';
import type { TransferDeps } from '../../services/money/transfers';
import { createHoldActivities } from './holds.activities';
import { createTransferActivities } from './transfer.activities';

/** The money domain's activities (task queue platform.money): holds, their expiry and sweep, transfers. */
export function createMoneyActivities(deps: HoldDeps & TransferDeps) {
  return { ...createHoldActivities(deps), ...createTransferActivities(deps) };
}

export type MoneyActivities = ReturnType<typeof createMoneyActivities>;
