import { createHoldActivities, type MoneyActivityDeps } from './holds.activities';
import { createTransferActivities } from './transfer.activities';

/** The money domain's activities (task queue platform.money): holds, their expiry and sweep, transfers. */
export function createMoneyActivities(deps: MoneyActivityDeps) {
  return { ...createHoldActivities(deps), ...createTransferActivities(deps) };
}

export type MoneyActivities = ReturnType<typeof createMoneyActivities>;
