import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import { createPlanLimitReader } from './plan-limits';
import type { DatabasePool } from '../../db/pool';
import type { MoneyDeps } from './deps';

export function createMoneyServices(config: Readonly<Config>, clients: { db: DatabasePool }, logger: Logger): MoneyDeps {
  const limits = createPlanLimitReader(clients.db, { ttlMs: config.money.planLimitsCacheMs, logger });
  return { config, db: clients.db, limits, logger };
}
