import type { Logger } from '../../common/logger';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { adjustUsage } from '../../db/queries/billing/usage.queries';
import { withTenant } from '../../db/tenant';
import type { PublishMeter } from '../events/publish-meter';
import { countCreationIn } from './limits';

/**
 * The plan's eventsPerDay for the event bus (docs/reference/billing.md#rule-17): every event a tenant
 * publishes (REST publish, gRPC Publish and BatchPublish) counts into the UTC day's events_per_day,
 * and a publish that would pass a non-zero limit is 402 plan-limit-exceeded. `enforce` is
 * BILLING_ENABLED, as for records, stored bytes and modules (docs/reference/billing.md#rule-18):
 * events are counted always and refused only while billing is deployed.
 */
export function publishedEventsMeter(db: DatabasePool, enforce: boolean, logger: Logger): PublishMeter {
  const countIn = (tx: DatabaseTransactionConnection, count: number) => countCreationIn(tx, 'events_per_day', enforce, count);
  return {
    count: (tenantId, count, tx) => (tx ? countIn(tx, count) : withTenant(db, tenantId, (own) => countIn(own, count))),
    async uncount(tenantId, count) {
      try {
        await withTenant(db, tenantId, (tx) => adjustUsage(tx, 'events_per_day', -count));
      } catch (error) {
        // The broker's refusal is what the caller needs to hear; the day's usage stays higher by these events.
        logger.warn({ err: error, tenantId, count }, 'events the broker did not take stay counted in events_per_day');
      }
    },
  };
}
