import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import type { TemporalHandle } from '../temporal/client';
import { SubscriptionWorkflows } from './subscription-workflows';

/** What the billing routes work with; built once per gateway. */
export interface BillingDeps {
  config: Readonly<Config>;
  /** The application pool: reads of plans and the subscription mirror, webhook receipts. */
  db: DatabasePool;
  workflows: SubscriptionWorkflows;
  logger: Logger;
}

export function createBillingServices(
  config: Readonly<Config>, clients: { db: DatabasePool; temporal: () => TemporalHandle | undefined }, logger: Logger,
): BillingDeps {
  return { config, db: clients.db, workflows: new SubscriptionWorkflows(clients.temporal, config), logger };
}
