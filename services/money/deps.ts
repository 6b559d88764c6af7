import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { PlanLimitReader } from './plan-limits';
import type { DatabasePool } from '../../db/pool';

/** What the money routes work with; built once per gateway by createMoneyServices. */
export interface MoneyDeps {
  config: Readonly<Config>;
  /** The application pool (platform_app): every statement runs under withTenant. */
  db: DatabasePool;
  /** maxTxAmount and maxBalance of the tenant's plan, cached 5 minutes, fail-closed. */
  limits: PlanLimitReader;
  logger: Logger;
}
