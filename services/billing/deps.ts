import type { Registry } from 'prom-client';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import type { TemporalHandle } from '../../common/temporal/client';
import { SubscriptionWorkflows } from './subscription-workflows';
import { WebhookDelivery } from './webhooks/delivery';

/** What the billing routes work with; built once per gateway. */
export interface BillingDeps {
  config: Readonly<Config>;
  /** The application pool: reads of plans and the subscription mirror, webhook receipts. */
  db: DatabasePool;
  workflows: SubscriptionWorkflows;
  /** Hands committed webhook receipts to the subscription workflows after the answer. */
  webhookDelivery: WebhookDelivery;
  logger: Logger;
}

export function createBillingServices(
  config: Readonly<Config>,
  clients: { db: DatabasePool; temporal: () => TemporalHandle | undefined; metrics?: Registry },
  logger: Logger,
): BillingDeps {
  const workflows = new SubscriptionWorkflows(clients.temporal, config);
  // Half the sweep's interval: a receipt still queued then is left to the sweep, never delivered by both.
  const handOverAfterMs = (config.billing.webhookRedeliveryIntervalSec * 1000) / 2;
  return {
    config, db: clients.db, workflows, logger,
    webhookDelivery: new WebhookDelivery({ db: clients.db, workflows, logger, ...config.billing.webhookDispatch, handOverAfterMs }, clients.metrics),
  };
}
